"""Independent live subscribers of a session's events and connection states."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from .models import ConnectionState, Event


class SubscriptionsMixin:
    """Needs `_subscribers`, `_state_subscribers`, `_closed` and `state` (ParlorSession)."""

    async def events(self) -> AsyncIterator[Event]:
        """Live events from now on, as an independent subscriber (ends when the session closes)."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._subscribers.append(queue)
        try:
            while not self._closed or not queue.empty():
                event = await queue.get()
                if event is None:
                    return
                yield event
        finally:
            self._subscribers.remove(queue)

    async def connection_states(self) -> AsyncIterator[ConnectionState]:
        """Connection states from now on, starting with the current one (ends when the session closes)."""
        queue: asyncio.Queue[ConnectionState | None] = asyncio.Queue()
        queue.put_nowait(self.state)
        self._state_subscribers.append(queue)
        try:
            while True:
                state = await queue.get()
                if state is None:
                    return
                yield state
                if state.kind == "closed":
                    return
        finally:
            self._state_subscribers.remove(queue)
