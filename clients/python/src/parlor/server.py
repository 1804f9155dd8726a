"""ParlorServer: the HTTP routes (auth with the kept claim, rooms, admin hooks) and connect() for a live session."""

from __future__ import annotations

import ssl
import urllib.parse
from typing import Any

import aiohttp

from .errors import ClientCode, ParlorError, make_error
from .models import Auth, ReconnectPolicy, Room
from .requests import room_id
from .session import ParlorSession


class ParlorServer:
    """A Parlor server at `url` (`http://host:port`, optionally with a path prefix).

    Use it as `async with ParlorServer(url) as server:` or call `await server.close()`; it owns an aiohttp session.
    `token` is sent as `Authorization: Bearer` on the HTTP calls that take no explicit token (rooms are then
    created by that user); `auth()` does not change it.
    """

    def __init__(self, url: str, *, token: str | None = None, request_timeout: float = 10.0,
                 reconnect: ReconnectPolicy | None = None, keep_events: int = 10_000,
                 ca_file: str | None = None, ssl_context: ssl.SSLContext | None = None):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "ws", "https", "wss") or not parsed.hostname:
            raise make_error(ClientCode.INVALID_URL,
                             f"the server URL must be http(s)://host:port or ws(s)://host:port, not {url!r}")
        netloc = parsed.netloc
        prefix = parsed.path.rstrip("/")
        secure = parsed.scheme in ("https", "wss")
        self.url = f"{'https' if secure else 'http'}://{netloc}{prefix}"
        self.ws_url = f"{'wss' if secure else 'ws'}://{netloc}{prefix}"
        # TLS: the certificate is always verified, against `ca_file` alone when given (a self-signed LAN server's
        # certificate, as curl --cacert), else the system's store; never a silent fall back to plain.
        self.ssl: ssl.SSLContext | None = None
        if secure:
            try:
                self.ssl = ssl_context or ssl.create_default_context(cafile=ca_file)
            except (OSError, ssl.SSLError) as unreadable:
                raise make_error(ClientCode.TLS, f"cannot use the CA file {ca_file!r}: {unreadable}") from None
        self.token = token
        self.request_timeout = request_timeout
        self.reconnect = reconnect or ReconnectPolicy()
        self.keep_events = keep_events
        self.claims: dict[str, str] = {}  # name -> the claim secret the last /auth for it returned
        self._http: aiohttp.ClientSession | None = None
        self._sessions: list[ParlorSession] = []

    # ------------------------------------------------------------------ HTTP plumbing

    async def http(self, method: str, path: str, *, json: Any = None, token: str | None = None,
                   params: dict[str, Any] | None = None) -> Any:
        """One HTTP call; returns the JSON body of a 2xx answer, raises the server's error otherwise."""
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.request_timeout))
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        query = {key: str(value).lower() if isinstance(value, bool) else str(value)
                 for key, value in (params or {}).items() if value is not None}
        try:
            async with self._http.request(method, self.url + path, json=json, headers=headers, params=query,
                                          ssl=self.ssl if self.ssl is not None else True) as response:
                text = await response.text()
                status = response.status
        except aiohttp.ClientSSLError as failed:
            raise make_error(ClientCode.TLS, f"{method} {path}: TLS with {self.url} failed: {failed}") from None
        except aiohttp.ClientConnectionError as failed:
            raise make_error(ClientCode.CONNECTION_FAILED, f"{method} {path}: cannot reach {self.url}: {failed}") from None
        except TimeoutError:
            raise make_error(ClientCode.TIMEOUT, f"{method} {path}: no answer within {self.request_timeout:g} s") from None
        try:
            body = _loads(text)
        except ValueError:
            body = None
        if not 200 <= status < 300:
            raise ParlorError.from_body(body, status=status)
        return body

    # ------------------------------------------------------------------ auth

    async def auth(self, name: str, *, claim: str | None = None, code: str | None = None) -> Auth:
        """POST /auth for `name`, sending the claim this server object kept for it (or `claim`).

        Without its claim, a name still in use (a connected session, a membership within its grace period, an open
        room it created) gets a NEW, separate identity with the same name: that is why the claim is kept here and
        sent on every later auth for the name. Pass `claim` to use one kept elsewhere (across processes)."""
        body: dict[str, Any] = {"name": name}
        kept = claim or self.claims.get(name)
        if kept:
            body["claim"] = kept
        if code is not None:
            body["code"] = code
        answer = await self.http("POST", "/auth", json=body)
        if not isinstance(answer, dict) or not isinstance(answer.get("jwt"), str):
            raise make_error(ClientCode.INVALID_RESPONSE, f"POST /auth answered {answer!r}")
        auth = Auth(name=str(answer.get("name", name)), jwt=answer["jwt"], user_id=answer.get("user_id"),
                    expires_at=answer.get("expires_at"), claim=answer.get("claim"), raw=answer)
        if auth.claim:
            self.claims[name] = auth.claim
            self.claims[auth.name] = auth.claim
        return auth

    # ------------------------------------------------------------------ rooms

    async def rooms(self, *, page_size: int | None = None, token: str | None = None) -> list[Room]:
        """GET /rooms: the open rooms, newest first."""
        answer = await self.http("GET", "/rooms", token=token or self.token, params={"page_size": page_size})
        return [Room.from_json(item) for item in answer or []]

    async def room(self, room: Any, *, token: str | None = None) -> Room:
        """GET /rooms/{id}: open or closed."""
        return Room.from_json(await self.http("GET", "/rooms/" + _segment(room_id(room)), token=token or self.token))

    async def create_room(self, display_name: str, *, name: str | None = None, mode: str | None = None,
                          ttl: int | None = None, max_members: int | None = None, e2ee: bool | None = None,
                          properties: dict[str, Any] | None = None, token: str | None = None) -> Room:
        """POST /rooms. `mode="stage"` makes a stage room (its creator, the token's user, is its moderator; a
        stage room needs a token). `properties` adds any other property as sent."""
        props = dict(properties or {})
        for key, value in (("mode", mode), ("ttl", ttl), ("max_members", max_members), ("e2ee", e2ee)):
            if value is not None:
                props[key] = value
        body: dict[str, Any] = {"display_name": display_name}
        if name is not None:
            body["name"] = name
        if props:
            body["properties"] = props
        return Room.from_json(await self.http("POST", "/rooms", json=body, token=token or self.token))

    async def members(self, room: Any, *, page_size: int | None = None, role: str | None = None,
                      hands: bool | None = None, cursor: str | None = None, token: str | None = None) -> dict[str, Any]:
        """GET /rooms/{id}/members: one page (`members`, `cursor` when more follow)."""
        return await self.http("GET", f"/rooms/{_segment(room_id(room))}/members", token=token or self.token,
                               params={"page_size": page_size, "role": role, "hands": hands, "cursor": cursor})

    async def events(self, room: Any, *, since: int = 0, page_size: int | None = None,
                     token: str | None = None) -> dict[str, Any]:
        """GET /rooms/{id}/events: the stored history above `since`."""
        return await self.http("GET", f"/rooms/{_segment(room_id(room))}/events", token=token or self.token,
                               params={"since": since, "page_size": page_size})

    # ------------------------------------------------------------------ admin and test-mode routes

    async def drop_member(self, room: Any, member_id: str, *, admin_token: str) -> int:
        """POST /rooms/{id}/members/{member}/drop (test mode): the server cuts the member's connections as a network
        failure would. Returns how many it cut."""
        path = f"/rooms/{_segment(room_id(room))}/members/{_segment(member_id)}/drop"
        answer = await self.http("POST", path, json={}, token=admin_token)
        return int((answer or {}).get("connections", 0))

    async def kick_member(self, room: Any, member_id: str, *, admin_token: str) -> None:
        """POST /rooms/{id}/members/{member}/kick: member:left reason kicked."""
        await self.http("POST", f"/rooms/{_segment(room_id(room))}/members/{_segment(member_id)}/kick", json={},
                        token=admin_token)

    async def reset(self, *, admin_token: str) -> None:
        """POST /admin/reset (test mode): every room, member and session is gone; sessions close with 4004."""
        await self.http("POST", "/admin/reset", json={}, token=admin_token)

    # ------------------------------------------------------------------ live sessions

    async def connect(self, token: str | None = None, *, name: str | None = None, open_timeout: float = 10.0,
                      reconnect: ReconnectPolicy | None = None) -> ParlorSession:
        """Opens a live session and waits for session:success.

        `name`: logs in as that name first (with its kept claim) and logs in again the same way when the token
        expires (close 4001). `token`: a token you already have (then an expired token ends the session)."""
        if name is not None:
            token = (await self.auth(name)).jwt

            async def fresh_token() -> str:
                return (await self.auth(name)).jwt
            provider = fresh_token
        else:
            token = token or self.token
            provider = None
            if token is None:
                raise make_error("auth:error:missing-token", "pass token= or name=, or set ParlorServer.token")
        session = ParlorSession(self.ws_url, token, label=name or "token", token_provider=provider,
                                reconnect=reconnect or self.reconnect, request_timeout=self.request_timeout,
                                open_timeout=open_timeout, keep_events=self.keep_events, ssl_context=self.ssl)
        await session._open()
        self._sessions.append(session)
        return session

    async def session(self, name: str, **options: Any) -> ParlorSession:
        """`connect(name=name)`: log in as `name` (claim kept) and open a live session."""
        return await self.connect(name=name, **options)

    async def close(self) -> None:
        """Closes every session this object opened and its HTTP connections."""
        sessions, self._sessions = self._sessions, []
        for session in sessions:
            await session.close()
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def __aenter__(self) -> "ParlorServer":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _segment(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _loads(text: str) -> Any:
    import json
    return json.loads(text) if text else None
