"""A live session: one WebSocket at a time, replies matched by tid, events kept and fanned out, automatic resume."""

from __future__ import annotations

import asyncio
import itertools
import json
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from .errors import ClientCode, ParlorError, make_error
from .expect import ExpectMixin
from .models import ConnectionState, Event, ReconnectPolicy
from .requests import RequestsMixin
from .subscriptions import SubscriptionsMixin
from .watches import WatchesMixin

TokenProvider = Callable[[], Awaitable[str]]

# Close codes that end the session for good (docs/protocol.md "close code"): resuming cannot bring it back.
_FINAL_CLOSES = {
    4003: ("auth:error:invalid-token", "the user's tokens were revoked (4003)"),
    4004: (ClientCode.SERVER_RESET, "the server was reset (4004): connect again, do not resume"),
    4005: (ClientCode.TAKEN_OVER, "another connection resumed this session (4005)"),
}
_TOKEN_EXPIRED = 4001


class _Signal:
    """Wakes every waiter when something arrived (an event, a state): waiters re-check their condition."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self._event.wait(), max(timeout, 0.0))
        except TimeoutError:
            pass


class ParlorSession(RequestsMixin, ExpectMixin, SubscriptionsMixin, WatchesMixin):
    """Made by `ParlorServer.connect()`. Every event from the moment of connecting is kept in `received` (the newest
    `keep_events`), so `expect()` never misses one; `events()` gives independent live subscribers."""

    def __init__(self, ws_url: str, token: str, *, label: str, token_provider: TokenProvider | None,
                 reconnect: ReconnectPolicy, request_timeout: float, open_timeout: float, keep_events: int,
                 ssl_context: ssl.SSLContext | None = None):
        self._ws_url = ws_url
        self._ssl = ssl_context
        self._token = token
        self._token_provider = token_provider
        self.label = label
        self.reconnect_policy = reconnect
        self.request_timeout = request_timeout
        self._open_timeout = open_timeout
        self._keep_events = keep_events
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._reconnect_task: asyncio.Task[None] | None = None
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._tids = itertools.count(1)
        self._ready = asyncio.Event()       # set while a connection is attached and usable
        self._released = asyncio.Event()    # set unless reconnects are held
        self._released.set()
        self._closed = False
        self._joined: dict[str, int] = {}   # room id -> newest event id known from join/resume replies
        self._member_ids: dict[str, str] = {}
        self._delivered: dict[str, int] = {}  # room id -> newest event id handed out (dedupes a resume's replay)
        self._watched: set[str] = set()
        self._filling: dict[str, list[Event]] = {}  # watched rooms whose missed history is being read after a resume
        self._subscribers: list[asyncio.Queue[Event | None]] = []
        self._state_subscribers: list[asyncio.Queue[ConnectionState | None]] = []
        self._arrived = _Signal()
        self.received: list[Event] = []
        self.states: list[ConnectionState] = []
        self._dropped_events = 0  # events trimmed off the front of `received`
        self.session_id: str | None = None
        self.user: dict[str, Any] = {}
        self.hello: dict[str, Any] = {}
        self._cursor = 0  # ExpectMixin: absolute index of the first event an expect() may still return

    # ------------------------------------------------------------------ opening

    async def _open(self) -> None:
        ws, hello = await self._open_socket()
        self._attach(ws, hello)
        self._set_state(ConnectionState("connected", session_id=self.session_id))
        self._ready.set()

    async def _open_socket(self) -> tuple[ClientConnection, dict[str, Any]]:
        url = f"{self._ws_url}/ws?token={self._token}"
        try:
            ws = await connect(url, open_timeout=self._open_timeout, proxy=None, max_size=1 << 22,
                               close_timeout=2, ssl=self._ssl)
        except InvalidStatus as refused:
            body = _json_or_none(refused.response.body)
            raise ParlorError.from_body(body, status=refused.response.status_code) from None
        except ssl.SSLError as failed:
            raise make_error(ClientCode.TLS, f"TLS with {self._ws_url} failed: {failed}") from None
        except InvalidHandshake as bad:
            raise make_error(ClientCode.HANDSHAKE_FAILED, f"WebSocket upgrade failed: {bad}") from None
        except (OSError, TimeoutError) as failed:
            raise make_error(ClientCode.CONNECTION_FAILED, f"cannot reach {self._ws_url}: {failed!r}") from None
        try:
            raw = await asyncio.wait_for(ws.recv(), self._open_timeout)
        except (ConnectionClosed, TimeoutError) as failed:
            await _abort(ws)
            code = getattr(getattr(failed, "rcvd", None), "code", None)
            raise make_error(ClientCode.CONNECTION_FAILED, f"no session:success (close {code})") from None
        first = _json_or_none(raw)
        if not isinstance(first, dict) or first.get("type") != "session:success":
            await _abort(ws)
            if isinstance(first, dict) and first.get("type") == "error":
                raise ParlorError.from_body(first.get("body"))
            raise make_error(ClientCode.INVALID_RESPONSE, f"expected session:success first, got {str(raw)[:200]}")
        return ws, first.get("body") or {}

    def _attach(self, ws: ClientConnection, hello: dict[str, Any]) -> None:
        self._ws = ws
        self.hello = hello
        self.session_id = hello.get("session_id")
        self.user = hello.get("user") or {}
        self._reader = asyncio.get_running_loop().create_task(self._read(ws))

    # ------------------------------------------------------------------ reading

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                message = _json_or_none(raw)
                if isinstance(message, dict):
                    self._handle(message)
        except ConnectionClosed:
            pass
        except Exception:  # a bug in handling one message must not leave a session that silently hears nothing
            await _abort(ws)
            raise
        finally:
            received = ws.protocol.close_rcvd  # None: no close frame (a network failure)
            close_code = received.code if received is not None else None
            if ws is self._ws:
                self._connection_ended(close_code)

    def _handle(self, message: dict[str, Any]) -> None:
        tid = message.get("tid")
        if tid is not None:
            future = self._pending.pop(str(tid), None)
            if future is not None and not future.done():
                future.set_result(message)
            return
        if "cid" in message:
            self._deliver(Event.from_message(message))

    def _deliver(self, event: Event) -> None:
        if not self._hold_back(event):
            self._deliver_now(event)

    def _deliver_now(self, event: Event) -> None:
        if event.id is not None:
            if event.id <= self._delivered.get(event.room, 0):
                return  # replayed by a resume: already handed out
            self._delivered[event.room] = event.id
            if event.room in self._joined:
                if event.type == "member:left" and event.member_id == self._member_ids.get(event.room):
                    self._forget_room(event.room)  # our membership ended (left elsewhere, kicked, dropped, closed)
                else:
                    self._joined[event.room] = max(self._joined[event.room], event.id)
        else:
            # A summary's events up to its last_event_id came before it or are in it: a resume need not replay them.
            accounted = event.body.get("last_event_id")
            if event.type in ("room:audience", "room:presence") and isinstance(accounted, int):
                self._delivered[event.room] = max(self._delivered.get(event.room, 0), accounted)
        self.received.append(event)
        if len(self.received) > self._keep_events:
            trimmed = len(self.received) - self._keep_events
            del self.received[:trimmed]
            self._dropped_events += trimmed
        for queue in self._subscribers:
            queue.put_nowait(event)
        self._arrived.fire()

    # ------------------------------------------------------------------ requests

    async def request(self, type: str, body: dict[str, Any] | None = None, *, timeout: float | None = None) -> dict[str, Any]:
        """Sends any request and returns its success reply's body; raises the server's error as a ParlorError.

        While reconnecting, waits (within the timeout) for the session to be back first."""
        timeout = self.request_timeout if timeout is None else timeout
        deadline = asyncio.get_running_loop().time() + timeout
        if not self._ready.is_set():
            self._raise_if_closed()
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except TimeoutError:
                raise make_error(ClientCode.TIMEOUT, f"{type}: not connected within {timeout:g} s") from None
            self._raise_if_closed()
        return await self._send(type, body, deadline - asyncio.get_running_loop().time())

    async def _send(self, type: str, body: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        ws = self._ws
        if ws is None:
            self._raise_if_closed()
            raise make_error(ClientCode.CONNECTION_LOST, f"{type}: no connection")
        tid = str(next(self._tids))
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[tid] = future
        message: dict[str, Any] = {"type": type, "tid": tid}
        if body:
            message["body"] = body
        try:
            await ws.send(json.dumps(message))
            reply = await asyncio.wait_for(future, max(timeout, 0.001))
        except ConnectionClosed:
            raise make_error(ClientCode.CONNECTION_LOST, f"{type}: the connection dropped before the reply") from None
        except TimeoutError:
            raise make_error(ClientCode.TIMEOUT, f"{type}: no reply within {timeout:.3g} s") from None
        finally:
            self._pending.pop(tid, None)
        if reply.get("type") == "error":
            raise ParlorError.from_body(reply.get("body"), request_type=type)
        if reply.get("type") != type + ":success":
            raise make_error(ClientCode.INVALID_RESPONSE, f"{type}: unexpected reply {str(reply)[:200]}")
        return reply.get("body") or {}

    def _raise_if_closed(self) -> None:
        if self._closed:
            last = self.states[-1] if self.states else None
            why = f": {last.error}" if last is not None and last.error else ""
            raise make_error(ClientCode.CLOSED, f"the session is closed{why}")

    def _fail_pending(self, error: ParlorError) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    # ------------------------------------------------------------------ rooms this session is in

    @property
    def joined_rooms(self) -> list[str]:
        return sorted(self._joined)

    def member_id(self, room: str) -> str | None:
        """This session's member id in a joined room."""
        return self._member_ids.get(room)

    def _remember_room(self, room: str, member_id: str, last_event_id: int) -> None:
        self._joined[room] = max(self._joined.get(room, 0), last_event_id)
        self._member_ids[room] = member_id

    def _forget_room(self, room: str) -> None:
        self._joined.pop(room, None)
        self._member_ids.pop(room, None)

    # ------------------------------------------------------------------ drops, reconnects, resume

    def _connection_ended(self, close_code: int | None) -> None:
        self._ws = None
        self._ready.clear()
        self._fail_pending(make_error(ClientCode.CONNECTION_LOST,
                                      "the connection dropped before the reply arrived"))
        if self._closed or (self._reconnect_task is not None and not self._reconnect_task.done()):
            return
        if close_code in _FINAL_CLOSES:
            code, detail = _FINAL_CLOSES[close_code]
            self._finish(make_error(code, detail))
            return
        needs_token = close_code == _TOKEN_EXPIRED
        if needs_token and self._token_provider is None:
            self._finish(make_error("auth:error:invalid-token", "the token expired (4001) and no name to log in again"))
            return
        if self.reconnect_policy.max_attempts <= 0:
            self._finish(make_error(ClientCode.CONNECTION_LOST, f"the connection closed ({close_code}); reconnects are off"))
            return
        how = "with no close frame" if close_code is None else f"with close code {close_code}"
        error = make_error(ClientCode.CONNECTION_LOST, f"the connection ended {how}")
        self._reconnect_task = asyncio.get_running_loop().create_task(self._reconnect(error, needs_token))

    async def _reconnect(self, error: ParlorError, needs_token: bool) -> None:
        previous_session = self.session_id
        for attempt in range(1, self.reconnect_policy.max_attempts + 1):
            self._set_state(ConnectionState("reconnecting", session_id=previous_session, attempt=attempt, error=error))
            await asyncio.sleep(self.reconnect_policy.delay(attempt))
            await self._released.wait()
            if self._closed:
                return
            try:
                if needs_token and self._token_provider is not None:
                    self._token = await self._token_provider()
                    needs_token = False
                ws, hello = await self._open_socket()
            except ParlorError as failed:
                error = failed
                if failed.is_authentication_failure:
                    if self._token_provider is None or needs_token:
                        self._finish(failed)
                        return
                    needs_token = True  # log in again (the kept claim keeps the identity) and retry
                continue
            if self._closed:
                await _abort(ws)
                return
            try:
                await self._resume(ws, hello, previous_session)
                return
            except ParlorError as failed:
                error = failed
                stale, self._ws = self._ws, None
                if stale is not None:
                    await _abort(stale)
        self._finish(make_error(ClientCode.RECONNECT_FAILED,
                                f"gave up after {self.reconnect_policy.max_attempts} attempts; last error: {error}"))

    async def _resume(self, ws: ClientConnection, hello: dict[str, Any], previous_session: str | None) -> None:
        self._attach(ws, hello)
        positions = {room: max(last, self._delivered.get(room, 0)) for room, last in self._joined.items()}
        resumed: list[str] = []
        lost: list[str] = []
        reasons: dict[str, str] = {}
        try:
            reply = await self._send("session:resume", {"session_id": previous_session, "last_event_ids": positions},
                                     self.request_timeout)
            resumed = [item["cid"] for item in reply.get("resumed") or [] if isinstance(item, dict) and "cid" in item]
            lost = [room for room in reply.get("lost") or [] if isinstance(room, str)]
            reasons = {k: v for k, v in (reply.get("lost_reasons") or {}).items() if isinstance(v, str)}
            self.session_id = reply.get("session_id") or self.session_id
        except ParlorError as failed:
            if failed.code != "session:error:not-found":
                raise
            lost = sorted(positions)  # the server no longer knows the old session: nothing can be resumed
            reasons = {room: "session-not-found" for room in lost}
        for room in lost:
            self._forget_room(room)
        watches_lost = await self._restore_watches()
        self._set_state(ConnectionState("resumed", session_id=self.session_id, resumed=sorted(resumed),
                                        lost=sorted(lost), lost_reasons=reasons, watches_lost=watches_lost))
        self._ready.set()

    def _set_state(self, state: ConnectionState) -> None:
        self.states.append(state)
        for queue in self._state_subscribers:
            queue.put_nowait(state)
        self._arrived.fire()

    def _finish(self, error: ParlorError | None) -> None:
        if self._closed:
            return
        self._closed = True
        self._set_state(ConnectionState("closed", session_id=self.session_id, error=error))
        self._fail_pending(error or make_error(ClientCode.CLOSED, "the session was closed"))
        self._ready.set()  # wake requests waiting for a connection: they see the session closed
        self._released.set()
        for queue in self._subscribers + self._state_subscribers:
            queue.put_nowait(None)

    @property
    def state(self) -> ConnectionState:
        return self.states[-1] if self.states else ConnectionState("connecting")

    @property
    def is_closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """Closes the connection (close 1000; the server keeps memberships for the grace period unless you leave
        first) and stops reconnecting. Returns once nothing of the session runs any more."""
        if self._closed:
            return
        self._finish(None)
        task, self._reconnect_task = self._reconnect_task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(), 3)
            except (TimeoutError, ConnectionClosed, OSError):
                await _abort(ws)
        reader, self._reader = self._reader, None
        if reader is not None and reader is not asyncio.current_task():
            await asyncio.gather(reader, return_exceptions=True)

    async def __aenter__(self) -> "ParlorSession":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ fault hooks (tests)

    def drop_connection(self) -> None:
        """Cuts the socket as a network failure would (no close frame): the session reconnects and resumes."""
        ws = self._ws
        if ws is not None and ws.transport is not None:
            self._ready.clear()  # requests from now on wait for the resume instead of going into the dead socket
            ws.transport.abort()

    def hold_reconnects(self) -> None:
        """Holds reconnect attempts just before they connect, until release_reconnects(): lets a test make the
        server's grace period run out while the session is certainly away."""
        self._released.clear()

    def release_reconnects(self) -> None:
        self._released.set()

    def __repr__(self) -> str:
        return f"<ParlorSession {self.label} {self.session_id} {self.state.kind}>"


def _json_or_none(raw: Any) -> Any:
    try:
        return json.loads(raw) if raw else None
    except (ValueError, TypeError):
        return None


async def _abort(ws: ClientConnection) -> None:
    if ws.transport is not None:
        ws.transport.abort()
