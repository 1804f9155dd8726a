"""Every request type of docs/protocol.md as a method (each returns the success reply's body unless noted)."""

from __future__ import annotations

from typing import Any, Protocol

from .models import Membership


def room_id(room: Any) -> str:
    """A room id from an id string, a Room or a Membership."""
    if isinstance(room, str):
        return room
    identifier = getattr(room, "id", None)
    if isinstance(identifier, str):
        return identifier
    raise TypeError(f"expected a room id, Room or Membership, got {room!r}")


class _Requester(Protocol):
    async def request(self, type: str, body: dict[str, Any] | None = None, *,
                      timeout: float | None = None) -> dict[str, Any]: ...

    def _remember_room(self, room: str, member_id: str, last_event_id: int) -> None: ...

    def _forget_room(self, room: str) -> None: ...

    def _remember_watch(self, room: str) -> None: ...

    def _forget_watch(self, room: str) -> None: ...


class RequestsMixin:
    """Typed helpers over `request(type, body)`."""

    async def ping(self: _Requester) -> dict[str, Any]:
        """session:ping: a round trip; its reply also says everything sent before it has arrived."""
        return await self.request("session:ping")

    # ------------------------------------------------------------------ membership

    async def join(self: _Requester, room: Any, *, e2ee: bool = False) -> Membership:
        """conversation:join (idempotent). `e2ee=True` is required for an end-to-end encrypted room."""
        body: dict[str, Any] = {"cid": room_id(room)}
        if e2ee:
            body["e2ee"] = True
        membership = Membership.from_body(await self.request("conversation:join", body))
        self._remember_room(membership.room, membership.member_id, membership.last_event_id)
        return membership

    async def leave(self: _Requester, room: Any) -> dict[str, Any]:
        """conversation:leave: ends the membership (member:left reason left)."""
        cid = room_id(room)
        reply = await self.request("conversation:leave", {"cid": cid})
        self._forget_room(cid)
        return reply

    async def members(self: _Requester, room: Any, *, page_size: int | None = None, order: str | None = None,
                      state: str | None = None, role: str | None = None, hands: bool | None = None,
                      cursor: str | None = None) -> dict[str, Any]:
        """conversation:members: one page (`members`, `cursor` when more follow)."""
        body = _fields(cid=room_id(room), page_size=page_size, order=order, state=state, role=role, hands=hands,
                       cursor=cursor)
        return await self.request("conversation:members", body)

    async def history(self: _Requester, room: Any, *, since: int = 0, page_size: int | None = None) -> dict[str, Any]:
        """conversation:events: one page of the room's stored history above `since` (`events`, `cursor`)."""
        return await self.request("conversation:events", _fields(cid=room_id(room), since=since, page_size=page_size))

    async def watch(self: _Requester, room: Any) -> dict[str, Any]:
        """conversation:watch: the room's live events without joining. After a resume the session watches again
        and hands out the events it missed (the server does not restore watches)."""
        cid = room_id(room)
        reply = await self.request("conversation:watch", {"cid": cid})
        self._remember_watch(cid)
        return reply

    async def unwatch(self: _Requester, room: Any) -> dict[str, Any]:
        cid = room_id(room)
        reply = await self.request("conversation:unwatch", {"cid": cid})
        self._forget_watch(cid)
        return reply

    # ------------------------------------------------------------------ media state

    async def enable_audio(self: _Requester, room: Any) -> dict[str, Any]:
        return await self.request("audio:enable", {"cid": room_id(room)})

    async def disable_audio(self: _Requester, room: Any) -> dict[str, Any]:
        return await self.request("audio:disable", {"cid": room_id(room)})

    async def mute(self: _Requester, room: Any) -> dict[str, Any]:
        return await self.request("audio:mute:on", {"cid": room_id(room)})

    async def unmute(self: _Requester, room: Any) -> dict[str, Any]:
        return await self.request("audio:mute:off", {"cid": room_id(room)})

    async def speaking(self: _Requester, room: Any, on: bool) -> dict[str, Any]:
        """audio:speaking:on/off (ignored by an SFU server for a member with a media session)."""
        return await self.request("audio:speaking:on" if on else "audio:speaking:off", {"cid": room_id(room)})

    async def media_offer(self: _Requester, room: Any, sdp: str, *, e2ee: bool = False) -> dict[str, Any]:
        """media:offer to the server's forwarding unit: the reply has the answer `sdp` and `slots`."""
        body: dict[str, Any] = {"cid": room_id(room), "sdp": sdp}
        if e2ee:
            body["e2ee"] = True
        return await self.request("media:offer", body)

    async def media_close(self: _Requester, room: Any) -> dict[str, Any]:
        return await self.request("media:close", {"cid": room_id(room)})

    async def rtc_offer(self: _Requester, room: Any, to: str, sdp: str) -> dict[str, Any]:
        return await self.request("rtc:offer", {"cid": room_id(room), "to": to, "sdp": sdp})

    async def rtc_answer(self: _Requester, room: Any, to: str, sdp: str) -> dict[str, Any]:
        return await self.request("rtc:answer", {"cid": room_id(room), "to": to, "sdp": sdp})

    async def rtc_ice(self: _Requester, room: Any, to: str, candidate: dict[str, Any] | None) -> dict[str, Any]:
        return await self.request("rtc:ice", {"cid": room_id(room), "to": to, "candidate": candidate})

    # ------------------------------------------------------------------ stage rooms and moderation

    async def raise_hand(self: _Requester, room: Any) -> dict[str, Any]:
        return await self.request("member:hand:raise", {"cid": room_id(room)})

    async def lower_hand(self: _Requester, room: Any, member_id: str | None = None) -> dict[str, Any]:
        """Lowers one's own hand, or (a moderator) `member_id`'s."""
        return await self.request("member:hand:lower", _fields(cid=room_id(room), member_id=member_id))

    async def set_role(self: _Requester, room: Any, member_id: str, role: str) -> dict[str, Any]:
        """member:role (moderators): `moderator`, `speaker` or `listener`."""
        return await self.request("member:role", {"cid": room_id(room), "member_id": member_id, "role": role})

    async def ban(self: _Requester, room: Any, user_id: str, seconds: int) -> dict[str, Any]:
        """member:ban (moderators): the reply's `until` says when it ends."""
        return await self.request("member:ban", {"cid": room_id(room), "user_id": user_id, "seconds": seconds})

    async def mute_all(self: _Requester, room: Any) -> dict[str, Any]:
        return await self.request("room:mute-all", {"cid": room_id(room)})

    async def lock(self: _Requester, room: Any) -> dict[str, Any]:
        return await self.request("room:lock", {"cid": room_id(room)})

    async def unlock(self: _Requester, room: Any) -> dict[str, Any]:
        return await self.request("room:unlock", {"cid": room_id(room)})

    # ------------------------------------------------------------------ chat, reactions, recording, streaming

    async def send_message(self: _Requester, room: Any, text: str | None = None, *,
                           ciphertext: str | None = None) -> dict[str, Any]:
        """message:send (`ciphertext` instead of `text` in an encrypted room); the reply's `id` is the event id."""
        return await self.request("message:send", _fields(cid=room_id(room), text=text, ciphertext=ciphertext))

    async def react(self: _Requester, room: Any, emoji: str) -> dict[str, Any]:
        return await self.request("reaction:send", {"cid": room_id(room), "emoji": emoji})

    async def start_recording(self: _Requester, room: Any) -> dict[str, Any]:
        """room:record:start: `recording_id`, `started_at`."""
        return await self.request("room:record:start", {"cid": room_id(room)})

    async def stop_recording(self: _Requester, room: Any, recording_id: str | None = None) -> dict[str, Any]:
        return await self.request("room:record:stop", _fields(cid=room_id(room), recording_id=recording_id))

    async def set_stream_public(self: _Requester, room: Any, public: bool) -> dict[str, Any]:
        """room:stream:public: open the live stream to anyone with its link, or close it to members."""
        return await self.request("room:stream:public", {"cid": room_id(room), "public": public})

    async def send_e2ee_key(self: _Requester, room: Any, key_message: dict[str, Any]) -> dict[str, Any]:
        """e2ee:key: relays `key_message` (v, public_key, identity_key, signature, keys…) unread to the members
        its `keys` name (every other joined member when none)."""
        return await self.request("e2ee:key", {**key_message, "cid": room_id(room)})


def _fields(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}
