"""Watches survive a resume: session:resume does not bring them back (docs/protocol.md, conversation:watch), so the
session watches again and reads the history it missed, holding live events back until the gap is filled."""

from __future__ import annotations

from typing import Any

from .errors import ParlorError
from .models import Event

_PAGE = 500


class WatchesMixin:
    """Needs `_watched`, `_filling`, `_delivered`, `_send`, `_deliver_now` and `request_timeout` (ParlorSession)."""

    def _remember_watch(self, room: str) -> None:
        self._watched.add(room)

    def _forget_watch(self, room: str) -> None:
        self._watched.discard(room)

    def _hold_back(self, event: Event) -> bool:
        """True when the event's room is being refilled: it is kept and handed out after the history."""
        held = self._filling.get(event.room)
        if held is None:
            return False
        held.append(event)
        return True

    async def _restore_watches(self) -> list[str]:
        """Watches every watched room again and delivers the events missed meanwhile; returns the rooms that could
        not be watched again (closed, gone, no longer visible)."""
        failed: list[str] = []
        for room in sorted(self._watched):
            self._filling[room] = []
            try:
                reply = await self._send("conversation:watch", {"cid": room}, self.request_timeout)
                await self._read_history(room, int(reply.get("last_event_id") or 0))
            except ParlorError:
                failed.append(room)
                self._watched.discard(room)
            finally:
                for event in self._filling.pop(room, []):
                    self._deliver_now(event)
        return failed

    async def _read_history(self, room: str, last_event_id: int) -> None:
        since = self._delivered.get(room, 0)
        while since < last_event_id:
            page: dict[str, Any] = await self._send(
                "conversation:events", {"cid": room, "since": since, "page_size": _PAGE}, self.request_timeout)
            events = [Event.from_message(item) for item in page.get("events") or [] if isinstance(item, dict)]
            for event in events:
                if event.id is not None and event.id <= last_event_id:
                    self._deliver_now(event)
            cursor = page.get("cursor")
            if not events or cursor is None:
                return
            since = int(cursor)
