"""session.expect / expect_none / expect_state: waits with deadlines whose failures list everything received."""

from __future__ import annotations

import asyncio
from typing import Any

from .matchers import Matcher, as_matcher
from .models import ConnectionState, Event

DEFAULT_TIMEOUT = 5.0


class EventTimeout(AssertionError):
    """expect() saw no matching event in time (or the session closed first); the message lists what arrived."""


class UnexpectedEvent(AssertionError):
    """expect_none() saw an event it should not have; the message lists what arrived."""


class ExpectMixin:
    """Needs `received`, `states`, `_cursor`, `_dropped_events`, `_arrived`, `is_closed` and `label` (ParlorSession)."""

    async def expect(self, matcher: Any = None, *, timeout: float = DEFAULT_TIMEOUT, type: str | None = None,
                     **fields: Any) -> Event:
        """The first event after the previous expect()'s match that fits, already received or arriving within
        `timeout` seconds. Events in between stay in `received` but are passed over.

            await bob.expect(member_left(reason="dropped", name="alice"))
            await bob.expect(type="member:media", name="alice", timeout=2)
        """
        wanted = as_matcher(matcher, type=type, **fields)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            index = self._first_match(wanted)
            if index is not None:
                self._cursor = index + 1
                return self.received[index - self._dropped_events]
            remaining = deadline - loop.time()
            if remaining <= 0 or self.is_closed:
                why = "the session closed without" if self.is_closed else "no"
                raise EventTimeout(f"{why} {wanted} within {timeout:g} s on {self.label}'s session; "
                                   + self.describe_received())
            await self._arrived.wait(remaining)

    async def expect_none(self, matcher: Any = None, *, timeout: float = 1.0, type: str | None = None,
                          **fields: Any) -> None:
        """Fails if a fitting event arrives (or arrived since the previous match) within `timeout` seconds."""
        wanted = as_matcher(matcher, type=type, **fields)
        try:
            found = await self.expect(wanted, timeout=timeout)
        except EventTimeout:
            return
        raise UnexpectedEvent(f"did not expect {wanted} within {timeout:g} s on {self.label}'s session but got "
                              f"{found.summary()}; " + self.describe_received())

    async def expect_state(self, kind: str, *, timeout: float = DEFAULT_TIMEOUT) -> ConnectionState:
        """The newest connection state of this kind (connected, reconnecting, resumed, closed) since the last
        expect_state() returned, already reached or reached within `timeout` seconds."""
        if kind not in ("connected", "reconnecting", "resumed", "closed"):
            raise ValueError(f"a connection state is connected, reconnecting, resumed or closed, not {kind!r}")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        start = getattr(self, "_state_cursor", 0)
        while True:
            for index in range(len(self.states) - 1, start - 1, -1):
                if self.states[index].kind == kind:
                    self._state_cursor = index + 1
                    return self.states[index]
            remaining = deadline - loop.time()
            if remaining <= 0 or (self.is_closed and kind != "closed"):
                raise EventTimeout(f"{self.label}'s session did not reach {kind} within {timeout:g} s; "
                                   + self.describe_received())
            await self._arrived.wait(remaining)

    def all(self, matcher: Any = None, *, type: str | None = None, **fields: Any) -> list[Event]:
        """Every event received so far that fits (ignores where expect() got to)."""
        wanted = as_matcher(matcher, type=type, **fields)
        return [event for event in self.received if wanted.matches(event)]

    def describe_received(self) -> str:
        events = self.received
        lines = "".join(f"\n  {event.summary()}" for event in events) if events else " nothing"
        states = ", ".join(state.summary() for state in self.states)
        trimmed = f" (and {self._dropped_events} older, trimmed)" if self._dropped_events else ""
        return f"received {len(events)} event(s){trimmed}:{lines}\n  connection states: {states}"

    def _first_match(self, matcher: Matcher) -> int | None:
        start = max(self._cursor, self._dropped_events)
        for index in range(start, self._dropped_events + len(self.received)):
            if matcher.matches(self.received[index - self._dropped_events]):
                return index
        return None
