"""parlor.audio against the real binary: `parlor join --play/--record` members driven from Python, and the ffmpeg
checks that say what a recording holds (docs/testing.md, "Audio in tests without a browser")."""

import os

import pytest

from parlor.audio import AudioMemberError, FFmpegNotFound, assert_heard, assert_not_heard, make_tone, tone_level


@pytest.fixture(scope="module")
def tone_440(tmp_path_factory):
    return make_tone(tmp_path_factory.mktemp("tones") / "alice.opus", 440, seconds=1.5)


async def test_bob_heard_alice_mixed_and_per_speaker(parlor_server, tone_440, tmp_path):
    room = await parlor_server.create_room("Audio")
    async with parlor_server.audio_member("bob-ears", room, record=tmp_path / "bob.ogg") as bob, \
            parlor_server.audio_member("carol-ears", room, record=tmp_path / "carol.ogg", record_mode="tracks") as carol:
        async with parlor_server.audio_member("alice-mic", room, play=tone_440) as alice:
            ended = await alice.play_ended(timeout=15)
            assert ended["packets"] > 50  # 1.5 s in 20 ms packets
            track = await carol.track("alice-mic", timeout=5)
    assert bob.returncode == 0 and carol.returncode == 0 and alice.returncode == 0
    assert bob.member_id and bob.member_id != alice.member_id
    level = assert_heard(tmp_path / "bob.ogg", 440)
    assert level.tone > level.rest + 20  # a clean tone: about 30 dB
    with pytest.raises(AssertionError, match="1000 Hz not heard"):
        assert_heard(tmp_path / "bob.ogg", 1000)  # the check can fail: nobody played 1000 Hz
    assert_not_heard(tmp_path / "bob.ogg", 1000)
    # tracks mode: one file per speaker, named after them, holding that speaker's audio.
    assert track == str(tmp_path / "carol-alice-mic.ogg")
    assert carol.tracks == {"alice-mic": track}
    assert_heard(track, 440)
    assert not os.path.exists(tmp_path / "carol.ogg")  # tracks mode writes no mixed file


async def test_nobody_playing_is_not_heard(parlor_server, tmp_path):
    room = await parlor_server.create_room("Silence")
    async with parlor_server.audio_member("dave-ears", room, record=tmp_path / "dave.ogg"):
        alice = await parlor_server.session("alice")  # a session that joins but sends no audio
        await alice.join(room)
        await alice.send_message(room, "no audio here")
    with pytest.raises(AssertionError, match="440 Hz not heard"):
        assert_heard(tmp_path / "dave.ogg", 440)


async def test_a_file_that_is_not_ogg_opus_fails_at_once_with_the_output(parlor_server, tmp_path):
    room = await parlor_server.create_room()
    bogus = tmp_path / "bogus.opus"
    bogus.write_bytes(b"not an ogg file")
    member = parlor_server.audio_member("erin-mic", room, play=bogus, connect_timeout=15)
    with pytest.raises(AudioMemberError) as failed:
        async with member:
            pass
    assert "exited with 2 before printing media:connected" in str(failed.value)
    assert "--play" in str(failed.value)  # the CLI's own reason is in the message


def test_arguments_are_checked_before_anything_starts():
    from parlor.audio import AudioMember
    with pytest.raises(ValueError, match="play= .* or record="):
        AudioMember("parlor", "http://127.0.0.1:1", "RM-x", "x")
    with pytest.raises(ValueError, match="record_mode"):
        AudioMember("parlor", "http://127.0.0.1:1", "RM-x", "x", record="x.ogg", record_mode="stereo")


def test_without_ffmpeg_the_helpers_say_so(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("PARLOR_FFMPEG", raising=False)
    with pytest.raises(FFmpegNotFound, match="apt-get install ffmpeg"):
        make_tone(tmp_path / "x.opus")
    with pytest.raises(FFmpegNotFound):
        tone_level(tmp_path / "x.ogg", 440)


def test_a_missing_recording_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no recording at"):
        assert_heard(tmp_path / "nothing.ogg", 440)
