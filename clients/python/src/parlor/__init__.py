"""Parlor's Python client: `ParlorServer` (HTTP routes, auth with the claim kept per name) and `ParlorSession`
(the live WebSocket session with automatic resume), plus the testing helpers used by the pytest plugin."""

from .errors import (AuthError, ClientCode, ClientError, ConnectionLost, E2EEError, HTTPError, MediaError,
                     MemberError, MessageError, ParlorError, RecordingError, RequestError, RequestTimeout, RoomError,
                     ServerError, SessionError)
from .expect import EventTimeout, UnexpectedEvent
from .matchers import Matcher, event_type, member_hand, member_joined, member_left, member_role, message, where
from .models import Auth, ConnectionState, Event, Membership, ReconnectPolicy, Room
from .server import ParlorServer
from .session import ParlorSession

__all__ = [
    "ParlorServer", "ParlorSession", "Auth", "ConnectionState", "Event", "Membership", "ReconnectPolicy", "Room",
    "ParlorError", "AuthError", "ClientCode", "ClientError", "ConnectionLost", "E2EEError", "HTTPError", "MediaError",
    "MemberError", "MessageError", "RecordingError", "RequestError", "RequestTimeout", "RoomError", "ServerError",
    "SessionError", "EventTimeout", "UnexpectedEvent", "Matcher", "event_type", "member_hand", "member_joined",
    "member_left", "member_role", "message", "where",
]
