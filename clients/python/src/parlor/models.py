"""What the client hands out: events, rooms, logins, memberships and connection states (thin views of the JSON)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    """A message the server sent without a `tid`: a room event (docs/protocol.md "Events").

    `id` is the room's event number (None for transient events: speaking, reactions, signalling, presence).
    `raw` is the message as received.
    """

    type: str
    room: str
    id: int | None
    from_member: str | None
    timestamp: str | None
    body: dict[str, Any]
    raw: dict[str, Any]

    @staticmethod
    def from_message(message: dict[str, Any]) -> "Event":
        body = message.get("body") if isinstance(message.get("body"), dict) else {}
        event_id = message.get("id")
        return Event(type=str(message.get("type")), room=str(message.get("cid")),
                     id=event_id if isinstance(event_id, int) else None, from_member=message.get("from"),
                     timestamp=message.get("timestamp"), body=body, raw=message)

    @property
    def member_id(self) -> str | None:
        return self.body.get("member_id") or self.from_member

    @property
    def user(self) -> dict[str, Any]:
        user = self.body.get("user")
        return user if isinstance(user, dict) else {}

    @property
    def name(self) -> str | None:
        """The user name the event is about (member events)."""
        return self.user.get("name")

    @property
    def user_id(self) -> str | None:
        return self.user.get("id")

    @property
    def reason(self) -> str | None:
        """member:left's reason: left, dropped, kicked or room_closed."""
        return self.body.get("reason")

    @property
    def raised(self) -> bool | None:
        return self.body.get("raised")

    @property
    def role(self) -> str | None:
        return self.body.get("role")

    @property
    def text(self) -> str | None:
        return self.body.get("text")

    def summary(self) -> str:
        """One line for failure messages: `member:left #4 in RM-… member MEM-… (bob) reason dropped`."""
        text = self.type + (f" #{self.id}" if self.id is not None else "") + f" in {self.room}"
        if self.member_id:
            text += f" member {self.member_id}"
        if self.name:
            text += f" ({self.name})"
        for key in ("reason", "role", "raised", "text"):
            if key in self.body:
                text += f" {key} {self.body[key]!r}" if key == "text" else f" {key} {self.body[key]}"
        return text


@dataclass(frozen=True)
class Auth:
    """POST /auth's answer. Keep `claim` with the name: ParlorServer does, and sends it on the next auth."""

    name: str
    jwt: str
    user_id: str | None
    expires_at: str | None
    claim: str | None
    raw: dict[str, Any]


@dataclass(frozen=True)
class Room:
    """A room as GET /rooms and POST /rooms describe it (`raw` has every field)."""

    id: str
    name: str
    display_name: str
    properties: dict[str, Any]
    raw: dict[str, Any]

    @staticmethod
    def from_json(json: dict[str, Any]) -> "Room":
        properties = json.get("properties") if isinstance(json.get("properties"), dict) else {}
        return Room(id=str(json.get("id")), name=str(json.get("name")), display_name=str(json.get("display_name")),
                    properties=properties, raw=json)

    @property
    def mode(self) -> str:
        return str(self.properties.get("mode", "open"))


@dataclass(frozen=True)
class Membership:
    """conversation:join's reply: this session's member in the room, the joined members, where the history is."""

    room: str
    member_id: str
    members: list[dict[str, Any]]
    last_event_id: int
    role: str | None
    mode: str | None
    body: dict[str, Any]

    @staticmethod
    def from_body(body: dict[str, Any]) -> "Membership":
        return Membership(room=str(body.get("cid")), member_id=str(body.get("member_id")),
                          members=list(body.get("members") or []), last_event_id=int(body.get("last_event_id") or 0),
                          role=body.get("role"), mode=body.get("mode"), body=body)

    @property
    def id(self) -> str:
        """The room id (so a Membership can be passed wherever a room is)."""
        return self.room


@dataclass(frozen=True)
class ConnectionState:
    """Where the session's connection is: `connected`, `reconnecting` (attempt N after `error`), `resumed` (which
    rooms came back and which were lost, with the server's reasons; watches are restored by then) or `closed`
    (`error`: why; None after close())."""

    kind: str
    session_id: str | None = None
    attempt: int = 0
    error: Exception | None = None
    resumed: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    lost_reasons: dict[str, str] = field(default_factory=dict)
    watches_lost: list[str] = field(default_factory=list)  # watched rooms that could not be watched again

    def summary(self) -> str:
        if self.kind == "reconnecting":
            return f"reconnecting (attempt {self.attempt}, after {self.error})"
        if self.kind == "resumed":
            reasons = f" {self.lost_reasons}" if self.lost_reasons else ""
            watches = f", watches lost {self.watches_lost}" if self.watches_lost else ""
            return f"resumed (resumed {self.resumed}, lost {self.lost}{reasons}{watches})"
        if self.kind == "closed":
            return f"closed ({self.error or 'by close()'})"
        return self.kind


@dataclass(frozen=True)
class ReconnectPolicy:
    """Bounded exponential backoff (as ParlorClient's): attempt N waits initial_delay * multiplier^(N-1), at most
    max_delay, times a random factor in [1 - jitter, 1]. After max_attempts failures in a row the session closes
    with client:error:reconnect-failed. max_attempts=0: never reconnect."""

    max_attempts: int = 6
    initial_delay: float = 0.25
    max_delay: float = 4.0
    multiplier: float = 2.0
    jitter: float = 0.2

    def delay(self, attempt: int) -> float:
        base = min(self.initial_delay * self.multiplier ** max(attempt - 1, 0), self.max_delay)
        spread = min(max(self.jitter, 0.0), 1.0)
        return base * random.uniform(1.0 - spread, 1.0)
