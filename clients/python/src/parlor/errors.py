"""Typed errors carrying the server's codes (docs/protocol.md "Error codes") and the client's own (client:error:*)."""

from __future__ import annotations

from typing import Any


class ParlorError(Exception):
    """An error the server answered (`code`, `title`, `detail` as it sent them) or the client raised itself.

    Catch a family (`RoomError`, `MemberError`, …) or compare `.code` (`"room:error:not-found"`). `status` is the HTTP
    status for HTTP errors, `request_type` the WebSocket request that failed.
    """

    def __init__(self, code: str, title: str | None = None, detail: str = "", *, status: int | None = None,
                 request_type: str | None = None, body: dict[str, Any] | None = None):
        self.code = code
        self.detail = detail
        self.title = title
        self.status = status
        self.request_type = request_type
        self.body = body or {}
        super().__init__(self._message())

    def _message(self) -> str:
        where = f" ({self.request_type})" if self.request_type else ""
        status = f" HTTP {self.status}" if self.status else ""
        return f"{self.code}{where}{status}: {self.detail or self.title or 'no detail'}"

    @property
    def is_authentication_failure(self) -> bool:
        """The server refused the token: reconnecting with it cannot help."""
        return self.status == 401 or self.code.startswith("auth:error:")

    @staticmethod
    def from_body(body: Any, *, status: int | None = None, request_type: str | None = None) -> "ParlorError":
        """The error of a server's JSON error body (HTTP `{code,title,detail}` or WebSocket `{code,detail}`)."""
        body = body if isinstance(body, dict) else {}
        code = body.get("code") if isinstance(body.get("code"), str) else None
        if code is None:
            code = f"http:error:{status}" if status else ClientCode.INVALID_RESPONSE
        return error_class(code)(code, body.get("title"), str(body.get("detail") or ""), status=status,
                                 request_type=request_type or body.get("request_type"), body=body)


class RequestError(ParlorError):
    """request:error:* — the request was malformed (missing or invalid field, unknown type, too large)."""


class RoomError(ParlorError):
    """room:error:* — not found, closed, full, locked, banned, recording states, …"""


class MemberError(ParlorError):
    """member:error:* — not joined, not allowed (role), unknown target, not found."""


class MessageError(ParlorError):
    """message:error:* and reaction:error:* — chat and reaction rules and rates."""


class MediaError(ParlorError):
    """media:error:* — too many senders or sessions, offer rate."""


class RecordingError(ParlorError):
    """recording:error:*."""


class E2EEError(ParlorError):
    """e2ee:error:*."""


class SessionError(ParlorError):
    """session:error:* — unknown session on resume, server reset (4004), taken over (4005)."""


class AuthError(ParlorError):
    """auth:error:* — invalid or missing token, rate limited, blocked, admin token required."""


class ServerError(ParlorError):
    """server:error:* — internal, unavailable, shutting down."""


class HTTPError(ParlorError):
    """http:error:* and ws:error:* — the HTTP layer refused the request."""


class ClientError(ParlorError):
    """client:error:* — raised by this client: connection failed or lost, timeout, closed, reconnect failed."""


class ConnectionLost(ClientError):
    """client:error:connection-lost — the connection dropped while the request waited; it may or may not have happened."""


class RequestTimeout(ClientError):
    """client:error:timeout — no reply within the request timeout."""


_FAMILIES: dict[str, type[ParlorError]] = {
    "request": RequestError, "room": RoomError, "member": MemberError, "message": MessageError,
    "reaction": MessageError, "media": MediaError, "recording": RecordingError, "e2ee": E2EEError,
    "session": SessionError, "auth": AuthError, "server": ServerError, "http": HTTPError, "ws": HTTPError,
    "client": ClientError,
}


def error_class(code: str) -> type[ParlorError]:
    if code == ClientCode.CONNECTION_LOST:
        return ConnectionLost
    if code == ClientCode.TIMEOUT:
        return RequestTimeout
    return _FAMILIES.get(code.split(":", 1)[0], ParlorError)


def make_error(code: str, detail: str, **extra: Any) -> ParlorError:
    return error_class(code)(code, None, detail, **extra)


class ClientCode:
    """The codes this client raises itself (the same as ParlorClient's, docs/protocol.md "Client error codes")."""

    CONNECTION_FAILED = "client:error:connection-failed"
    CONNECTION_LOST = "client:error:connection-lost"
    CLOSED = "client:error:closed"
    RECONNECT_FAILED = "client:error:reconnect-failed"
    TIMEOUT = "client:error:timeout"
    INVALID_RESPONSE = "client:error:invalid-response"
    HANDSHAKE_FAILED = "client:error:handshake-failed"
    TLS = "client:error:tls"
    INVALID_URL = "client:error:invalid-url"
    SERVER_RESET = "session:error:server-reset"
    TAKEN_OVER = "session:error:taken-over"
