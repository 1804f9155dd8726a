"""The `parlor` binary as a test server (`parlor serve --dev --port 0`), and the per-test handle the pytest plugin's
`parlor_server` fixture yields. Usable without pytest too."""

from __future__ import annotations

import json
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

from .audio import AudioMember
from .errors import ParlorError
from .models import Room
from .requests import room_id
from .server import ParlorServer
from .session import ParlorSession

DEV_ADMIN_TOKEN = "parlor-dev-admin-token"  # what `parlor serve --dev` uses (docs/testing.md, the dev preset)
_LISTENING = "listening on "
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the server is on loopback


class ParlorBinaryNotFound(RuntimeError):
    pass


def find_parlor_binary() -> str:
    """PARLOR_BIN if set (it must be an executable file), else `parlor` on PATH."""
    configured = os.environ.get("PARLOR_BIN")
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            raise ParlorBinaryNotFound(f"PARLOR_BIN={configured} is not an executable file")
        return os.path.abspath(configured)
    found = shutil.which("parlor")
    if found is None:
        raise ParlorBinaryNotFound("no parlor binary: set PARLOR_BIN=/path/to/parlor or put parlor on PATH "
                                   "(build it with `swift build --product parlor`; it lands in .build/debug/parlor)")
    return found


class ParlorProcess:
    """`parlor serve --dev --port 0 [extra args]`, started at once; `url` is read from its first stdout line."""

    def __init__(self, binary: str | None = None, extra_args: list[str] | None = None, *,
                 start_timeout: float = 30.0, admin_token: str = DEV_ADMIN_TOKEN):
        self.binary = binary or find_parlor_binary()
        self.admin_token = admin_token
        # Its own working directory (recordings and other files go to ./data), removed by stop().
        self.workdir = tempfile.mkdtemp(prefix="parlor-test-")
        self._stdout = open(os.path.join(self.workdir, "stdout.log"), "wb")
        self._stderr = open(os.path.join(self.workdir, "stderr.log"), "wb")
        command = [self.binary, "serve", "--dev", "--port", "0", *(extra_args or [])]
        # Files, not pipes: a server writing more than a pipe holds would block on a reader nobody runs.
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._stdout, stderr=self._stderr,
                                        cwd=self.workdir)
        self.pid = self.process.pid
        try:
            self.url = self._wait_for_address(start_timeout)
        except BaseException:
            self.stop()
            raise
        # With --tls-self-signed the certificate is made in ./data: the one CA a client of this server trusts.
        self.ca_file = os.path.join(self.workdir, "data", "tls-cert.pem") if self.url.startswith("https:") else None
        self._opener = _NO_PROXY if self.ca_file is None else urllib.request.build_opener(
            urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=self.ca_file)))

    def _wait_for_address(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            with open(self._stdout.name, "rb") as stdout:
                first = stdout.read(4096)
            if b"\n" in first:
                line = first.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
                if not line.startswith((_LISTENING + "http://", _LISTENING + "https://")):
                    raise RuntimeError(f"parlor printed {line!r} instead of 'listening on http://…'; stderr:\n"
                                       + self.log_tail())
                return line[len(_LISTENING):]
            status = self.process.poll()
            if status is not None:
                raise RuntimeError(f"parlor exited with {status} before listening; stderr:\n" + self.log_tail())
            if time.monotonic() > deadline:
                raise RuntimeError(f"parlor printed no listening line within {timeout:g} s; stderr:\n" + self.log_tail())
            time.sleep(0.02)  # a file has nothing to await; the deadline above bounds this

    def admin_post(self, path: str) -> Any:
        """POST an admin route with the dev admin token (synchronously; for fixtures outside any event loop)."""
        self.check_running()
        request = urllib.request.Request(self.url + path, data=b"{}", method="POST", headers={
            "Authorization": f"Bearer {self.admin_token}", "Content-Type": "application/json"})
        try:
            with self._opener.open(request, timeout=10) as response:
                raw = response.read()
        except urllib.error.HTTPError as refused:
            body = refused.read()
            raise ParlorError.from_body(_json(body), status=refused.code) from None
        return _json(raw)

    def reset(self) -> None:
        """POST /admin/reset: every room, member and session is gone (connected sessions close with 4004)."""
        self.admin_post("/admin/reset")

    def check_running(self) -> None:
        status = self.process.poll()
        if status is not None:
            raise RuntimeError(f"parlor (pid {self.pid}) exited with {status}; stderr:\n" + self.log_tail())

    def log_tail(self, lines: int = 40) -> str:
        try:
            with open(self._stderr.name, "rb") as stderr:
                text = stderr.read().decode("utf-8", "replace").splitlines()
        except FileNotFoundError:
            return "(the server's log is gone: it was stopped)"
        return "\n".join(text[-lines:])

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM by PID, then SIGKILL if it does not exit in time; removes its working directory and logs."""
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.process.wait(5)
        self._stdout.close()
        self._stderr.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
        return self.process.returncode


class TestParlor:
    """What the `parlor_server` fixture yields: a freshly reset server and helpers bound to it.

    `client` is a ParlorServer for the server (it keeps every name's claim, so `session("alice")` twice is the same
    alice). Sessions made here are closed when the test ends."""

    __test__ = False  # not a test class, whatever pytest's collection thinks of the name

    def __init__(self, process: ParlorProcess):
        self.process = process
        self.url = process.url
        self.admin_token = process.admin_token
        self.client = ParlorServer(process.url, ca_file=process.ca_file)
        self._audio_members: list[AudioMember] = []

    async def session(self, name: str, **options: Any) -> ParlorSession:
        """Log in as `name` (claim kept) and open a live session."""
        return await self.client.session(name, **options)

    async def create_room(self, display_name: str = "Test room", *, creator: str | None = None,
                          **properties: Any) -> Room:
        """POST /rooms, as `creator` when given (a stage room, `mode="stage"`, needs one: it becomes the moderator).
        Keywords: name, mode, ttl, max_members, e2ee, properties."""
        token = (await self.client.auth(creator)).jwt if creator is not None else None
        return await self.client.create_room(display_name, token=token, **properties)

    async def drop(self, room: Any, member_id: str) -> int:
        """Server side: cut the member's connections as a network failure would (test mode)."""
        return await self.client.drop_member(room_id(room), member_id, admin_token=self.admin_token)

    async def kick(self, room: Any, member_id: str) -> None:
        await self.client.kick_member(room_id(room), member_id, admin_token=self.admin_token)

    async def reset(self) -> None:
        """POST /admin/reset mid-test (the fixture resets before every test already)."""
        await self.client.reset(admin_token=self.admin_token)

    def audio_member(self, name: str, room: Any, *, play: str | os.PathLike[str] | None = None, loop: bool = False,
                     record: str | os.PathLike[str] | None = None, record_mode: str | None = None,
                     **options: Any) -> AudioMember:
        """`parlor join ROOM --as NAME --json` on this server, with the fixture's binary (and CA under TLS), sending
        `play` (Ogg Opus) and/or recording what it hears to `record`. `async with` starts it and waits for its
        audio path (`connect_timeout`, 20 s), and stops it by PID with SIGTERM at the end (the files complete).
        A user of its own: use a name no session of the test uses (the claim rule). parlor.audio.AudioMember."""
        member = AudioMember(self.process.binary, self.url, room, name, play=play, loop=loop, record=record,
                             record_mode=record_mode, ca_file=self.process.ca_file, **options)
        self._audio_members.append(member)
        return member

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's stderr."""
        return self.process.log_tail(lines)

    async def close(self) -> None:
        for member in self._audio_members:  # started without `async with`, or left running: not past the test
            await member.stop()
        self._audio_members.clear()
        await self.client.close()


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None
