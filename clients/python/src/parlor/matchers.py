"""What `session.expect` waits for: an event type plus optional fields (as ParlorTesting's EventMatcher), or any
predicate. Every matcher has a description used in failure messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .models import Event

_ANY = object()


class Matcher:
    """Matches an event by `type` (None: any) and fields: name, member_id, room, and any body field given."""

    def __init__(self, type: str | None = None, *, predicate: Callable[[Event], bool] | None = None,
                 description: str | None = None, **fields: Any):
        self.type = type
        self.fields = {key: value for key, value in fields.items() if value is not None}
        self.predicate = predicate
        self.description = description or _describe(type, self.fields)

    def matches(self, event: Event) -> bool:
        if self.type is not None and event.type != self.type:
            return False
        for key, wanted in self.fields.items():
            if _field(event, key) != wanted:
                return False
        return self.predicate is None or bool(self.predicate(event))

    def __call__(self, event: Event) -> bool:
        return self.matches(event)

    def __str__(self) -> str:
        return self.description

    __repr__ = __str__


def _field(event: Event, key: str) -> Any:
    if key == "name":
        return event.name
    if key == "member_id":
        return event.member_id
    if key == "room":
        return event.room
    if key == "user_id":
        return event.user_id
    return event.body.get(key, _ANY)


def _describe(type: str | None, fields: dict[str, Any]) -> str:
    text = type or "any event"
    if fields:
        text += " (" + ", ".join(f"{key}: {value}" for key, value in fields.items()) + ")"
    return text


def member_joined(name: str | None = None, *, member_id: str | None = None, room: Any = None) -> Matcher:
    return Matcher("member:joined", name=name, member_id=member_id, room=_room(room))


def member_left(reason: str | None = None, *, name: str | None = None, member_id: str | None = None,
                room: Any = None) -> Matcher:
    """member:left, optionally with a reason: left, dropped, kicked or room_closed."""
    if reason is not None and reason not in ("left", "dropped", "kicked", "room_closed"):
        raise ValueError(f"member:left reason is left, dropped, kicked or room_closed, not {reason!r}")
    return Matcher("member:left", reason=reason, name=name, member_id=member_id, room=_room(room))


def member_hand(raised: bool | None = None, *, name: str | None = None, room: Any = None) -> Matcher:
    return Matcher("member:hand", raised=raised, name=name, room=_room(room))


def member_role(role: str | None = None, *, name: str | None = None, room: Any = None) -> Matcher:
    return Matcher("member:role", role=role, name=name, room=_room(room))


def message(text: str | None = None, *, name: str | None = None, room: Any = None) -> Matcher:
    return Matcher("message:text", text=text, name=name, room=_room(room))


def event_type(type: str, *, room: Any = None) -> Matcher:
    """Any event of this type ("member:media", "audio:mute:on", …)."""
    return Matcher(type, room=_room(room))


def where(description: str, predicate: Callable[[Event], bool]) -> Matcher:
    """Any predicate over an Event, with a description for failure messages."""
    return Matcher(None, predicate=predicate, description=description)


def as_matcher(matcher: Any = None, *, type: str | None = None, **fields: Any) -> Matcher:
    """A Matcher from a Matcher, a predicate, or keywords (`type="member:media"`, `name="bob"`, …)."""
    if isinstance(matcher, Matcher):
        if type is not None or fields:
            raise TypeError("pass either a matcher or keywords, not both")
        return matcher
    if callable(matcher):
        return Matcher(type, predicate=matcher, description=getattr(matcher, "__name__", "predicate"),
                       **_normalise(fields))
    if matcher is not None:
        raise TypeError(f"expected a Matcher, a predicate or keywords, got {matcher!r}")
    return Matcher(type, **_normalise(fields))


def _normalise(fields: dict[str, Any]) -> dict[str, Any]:
    if "room" in fields:
        fields = {**fields, "room": _room(fields["room"])}
    return fields


def _room(room: Any) -> str | None:
    if room is None or isinstance(room, str):
        return room
    return getattr(room, "id", room)
