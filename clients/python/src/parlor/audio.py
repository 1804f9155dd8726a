"""Audio members for tests: `parlor join ROOM --as NAME --json --play FILE.opus --record FILE.ogg` as a child process
(docs/testing.md, "Audio in tests without a browser"), with the tone helpers of `parlor.tones`.

    async with parlor_server.audio_member("bob-ears", room, record="bob.ogg") as bob:
        async with parlor_server.audio_member("alice-mic", room, play=make_tone("alice.opus", 440)) as alice:
            await alice.play_ended()
    assert_heard("bob.ogg", 440)

The process logs in by itself (`--as NAME`), so it is a user of its own: a name a Python session of the test also
uses is, while that session holds it, a *separate* identity with the same name (the claim rule). Give audio members
names no session uses.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from typing import Any

from .requests import room_id
from .tones import (FFmpegNotFound, ToneLevel, assert_heard, assert_not_heard, find_ffmpeg, make_tone,  # noqa: F401
                    tone_level)

__all__ = ["AudioMember", "AudioMemberError", "FFmpegNotFound", "ToneLevel", "assert_heard", "assert_not_heard",
           "make_tone", "tone_level"]

_OUTPUT_KEPT = 65536


class AudioMemberError(AssertionError):
    """The member's process failed: it exited, or a line it should print did not come in time. The message has its
    output. An AssertionError, so pytest reports it as a failed expectation."""


class AudioMember:
    """One `parlor join --json` process with --play and/or --record. Use `async with` (or `start()` and `stop()`).

    `member_id` (from its "joined" line), `tracks` (speaker name → file, from its `record:track` lines with
    `record_mode="tracks"`), `lines` (every JSON line it printed), `returncode` once stopped."""

    def __init__(self, binary: str, server: str, room: Any, name: str, *, play: str | os.PathLike[str] | None = None,
                 loop: bool = False, record: str | os.PathLike[str] | None = None, record_mode: str | None = None,
                 ca_file: str | None = None, extra_args: list[str] | None = None, connect_timeout: float = 20,
                 check: bool = True):
        if play is None and record is None:
            raise ValueError("an audio member needs play= (a file to send) or record= (where to write what it hears)")
        if record_mode not in (None, "mixed", "tracks"):
            raise ValueError(f"record_mode must be 'mixed' or 'tracks', not {record_mode!r}")
        self.name = name
        self.room = room_id(room)
        self.connect_timeout = connect_timeout
        self.check = check
        self.command = [binary, "join", self.room, "--as", name, "--json", "--server", server]
        if ca_file:
            self.command += ["--ca-file", ca_file]
        if play is not None:
            self.command += ["--play", os.path.abspath(play)] + (["--play-loop"] if loop else [])
        elif loop:
            raise ValueError("loop=True goes with play=")
        if record is not None:
            self.command += ["--record", os.path.abspath(record)]
            if record_mode:
                self.command += ["--record-mode", record_mode]
        self.command += extra_args or []
        self.member_id: str | None = None
        self.tracks: dict[str, str] = {}
        self.lines: list[dict[str, Any]] = []
        self.returncode: int | None = None
        self.pid: int | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._stdout = ""
        self._stderr = ""
        self._changed = asyncio.Event()
        self._readers: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> AudioMember:
        await self.start()
        return self

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> None:
        status = await self.stop()
        if self.check and kind is None and status != 0:
            raise AudioMemberError(self._report(f"exited with {status} (0 expected after SIGTERM)"))

    async def start(self) -> AudioMember:
        """Starts the process and waits for its `media:connected` line (the audio path is up)."""
        self._process = await asyncio.create_subprocess_exec(
            *self.command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=1 << 20, env={k: v for k, v in os.environ.items() if k != "PARLOR_TOKEN"})
        self.pid = self._process.pid
        self._readers = [asyncio.create_task(self._read_stdout()), asyncio.create_task(self._read_stderr())]
        try:
            await self.wait_for("media:connected", timeout=self.connect_timeout)
        except BaseException:
            await self.stop()
            raise
        return self

    async def play_ended(self, timeout: float = 30) -> dict[str, Any]:
        """The `play:ended` line: the whole file has been sent."""
        return await self.wait_for("play:ended", timeout=timeout)

    async def track(self, name: str, timeout: float = 10) -> str:
        """The path of the track file for speaker `name` (record_mode="tracks"), once it exists."""
        line = await self.wait_for("record:track", timeout=timeout, name=name)
        return line["path"]

    async def wait_for(self, type: str, timeout: float = 10, **fields: Any) -> dict[str, Any]:
        """The first line of `type` whose fields equal `fields`; AudioMemberError with the output if the process
        exits first, prints `record:failed`, or `timeout` seconds pass."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for line in self.lines:
                if line.get("type") == type and all(line.get(key) == value for key, value in fields.items()):
                    return line
            failed = next((line for line in self.lines if line.get("type") == "record:failed"), None)
            if failed is not None:
                raise AudioMemberError(self._report(f"could not record: {failed.get('detail')}"))
            if self._process is None or self._process.returncode is not None and all(r.done() for r in self._readers):
                status = None if self._process is None else self._process.returncode
                raise AudioMemberError(self._report(f"exited with {status} before printing {type} {fields or ''}"))
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AudioMemberError(self._report(f"printed no {type} {fields or ''}within {timeout:g} s"))
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass

    async def stop(self, timeout: float = 15) -> int | None:
        """SIGTERM by PID (the member leaves and its recording is completed), SIGKILL after `timeout` s."""
        process = self._process
        if process is None:
            return None
        if process.returncode is None:
            try:
                os.kill(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(process.wait(), timeout)
            except TimeoutError:
                os.kill(process.pid, signal.SIGKILL)
                await process.wait()
        for reader in self._readers:
            await reader
        self.returncode = process.returncode
        return self.returncode

    @property
    def output(self) -> str:
        """What the process printed (the last 64 KiB of stdout and of stderr)."""
        return f"stdout:\n{self._stdout or '(nothing)'}\nstderr:\n{self._stderr or '(nothing)'}"

    def _report(self, what: str) -> str:
        return f"audio member {self.name} (pid {self.pid}: {' '.join(self.command)}) {what}\n{self.output}"

    async def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        async for raw in self._process.stdout:
            text = raw.decode("utf-8", "replace")
            self._stdout = (self._stdout + text)[-_OUTPUT_KEPT:]
            try:
                line = json.loads(text)
            except ValueError:
                continue
            if not isinstance(line, dict):
                continue
            self.lines.append(line)
            if line.get("type") == "joined" and isinstance(line.get("member_id"), str):
                self.member_id = line["member_id"]
            elif line.get("type") == "record:track" and isinstance(line.get("name"), str):
                self.tracks[line["name"]] = line.get("path", "")
            self._changed.set()
        await self._process.wait()
        self._changed.set()

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        async for raw in self._process.stderr:
            self._stderr = (self._stderr + raw.decode("utf-8", "replace"))[-_OUTPUT_KEPT:]
        self._changed.set()
