"""Test tones and "was it heard" checks on Ogg Opus files, through ffmpeg (Debian: `apt-get install ffmpeg`).

`make_tone` writes a sine tone as Ogg Opus (what `parlor join --play` sends); `tone_level` measures how loud a
frequency is in a recording against everything else (ffmpeg's bandpass and bandreject filters, then volumedetect:
docs/testing.md's shell recipe); `assert_heard` / `assert_not_heard` turn that into an assertion. They run ffmpeg
synchronously: a fraction of a second per call for files of a few seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import NamedTuple

# A 2 s tone mixed into a recording measures about -22 dB in its band and about -50 dB outside it (docs/testing.md);
# silence measures -91 dB. The bands are in Hz (width_type=h): ffmpeg's default width is a Q factor, and a Q of 200
# rings so long after the tone starts that the "rest" was only 13 dB below a clean tone, 8 dB below a lossy one.
HEARD_FLOOR_DB = -30.0
HEARD_MARGIN_DB = 10.0
_MEAN_VOLUME = re.compile(r"mean_volume:\s*(-?[0-9.]+|-inf) dB")


class FFmpegNotFound(RuntimeError):
    pass


class ToneLevel(NamedTuple):
    """Mean volumes in dB: `tone` in a 50 Hz band around the frequency, `rest` with a 200 Hz band around it cut."""
    frequency: float
    tone: float
    rest: float


def find_ffmpeg() -> str:
    """PARLOR_FFMPEG if set, else `ffmpeg` on PATH; a clear error without one."""
    configured = os.environ.get("PARLOR_FFMPEG")
    found = configured if configured and os.access(configured, os.X_OK) else shutil.which("ffmpeg")
    if found is None:
        raise FFmpegNotFound("ffmpeg is needed to make and measure tones but is not on PATH (Debian/Ubuntu: "
                             "apt-get install ffmpeg; or set PARLOR_FFMPEG=/path/to/ffmpeg)")
    return found


def _ffmpeg(arguments: list[str], what: str, timeout: float = 60) -> str:
    result = subprocess.run([find_ffmpeg(), "-nostdin", "-hide_banner", *arguments], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"ffmpeg failed to {what} (exit {result.returncode}):\n{result.stderr[-2000:]}")
    return result.stderr


def make_tone(path: str | os.PathLike[str], frequency: float = 440, seconds: float = 2) -> str:
    """Writes a sine tone of `frequency` Hz lasting `seconds` to `path` as Ogg Opus (libopus); returns the path."""
    if frequency <= 0 or seconds <= 0:
        raise ValueError(f"a tone needs a positive frequency and length, not {frequency} Hz for {seconds} s")
    target = os.fspath(path)
    _ffmpeg(["-v", "error", "-y", "-f", "lavfi", "-i", f"sine=frequency={frequency:g}:duration={seconds:g}",
             "-c:a", "libopus", "-f", "ogg", target], f"write a {frequency:g} Hz tone to {target}")
    return target


def _mean_volume(path: str, audio_filter: str) -> float:
    log = _ffmpeg(["-i", path, "-af", f"{audio_filter},volumedetect", "-f", "null", "-"], f"measure {path}")
    found = _MEAN_VOLUME.search(log)
    if found is None:
        raise RuntimeError(f"ffmpeg measured no volume in {path} (no audio in it?):\n{log[-2000:]}")
    return float("-inf") if found.group(1) == "-inf" else float(found.group(1))


def tone_level(path: str | os.PathLike[str], frequency: float) -> ToneLevel:
    """How loud `frequency` is in the recording at `path`, and how loud everything else is."""
    find_ffmpeg()
    target = os.fspath(path)
    if not os.path.isfile(target):
        raise FileNotFoundError(f"no recording at {target}")
    return ToneLevel(frequency,
                     tone=_mean_volume(target, f"bandpass=f={frequency:g}:width_type=h:w=50"),
                     rest=_mean_volume(target, f"bandreject=f={frequency:g}:width_type=h:w=200"))


def _heard(level: ToneLevel, floor: float, margin: float) -> bool:
    return level.tone > floor and level.tone > level.rest + margin


def assert_heard(path: str | os.PathLike[str], frequency: float, *, floor: float = HEARD_FLOOR_DB,
                 margin: float = HEARD_MARGIN_DB) -> ToneLevel:
    """AssertionError unless `frequency` is above `floor` dB and `margin` dB above the rest of the recording."""
    level = tone_level(path, frequency)
    assert _heard(level, floor, margin), (
        f"{os.fspath(path)}: {frequency:g} Hz not heard: its band {level.tone:.1f} dB, the rest {level.rest:.1f} dB "
        f"(heard means above {floor:g} dB and {margin:g} dB above the rest)")
    return level


def assert_not_heard(path: str | os.PathLike[str], frequency: float, *, floor: float = HEARD_FLOOR_DB,
                     margin: float = HEARD_MARGIN_DB) -> ToneLevel:
    """The opposite of `assert_heard`, with the same measure."""
    level = tone_level(path, frequency)
    assert not _heard(level, floor, margin), (
        f"{os.fspath(path)}: {frequency:g} Hz heard: its band {level.tone:.1f} dB, the rest {level.rest:.1f} dB")
    return level
