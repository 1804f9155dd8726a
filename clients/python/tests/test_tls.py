"""https/wss against `parlor serve --tls-self-signed`: its certificate trusted as the CA, and nothing else trusted."""

import asyncio

import pytest

from parlor import ParlorError, ParlorServer, member_joined
from parlor.testserver import ParlorProcess, TestParlor


@pytest.fixture(scope="module")
def tls_process():
    process = ParlorProcess(extra_args=["--tls-self-signed"])
    yield process
    process.stop()


def test_a_self_signed_server_trusted_through_its_certificate(tls_process):
    asyncio.run(asyncio.wait_for(trusted(tls_process), 30))


async def trusted(tls_process):
    assert tls_process.url.startswith("https://127.0.0.1:")
    parlor = TestParlor(tls_process)
    try:
        room = await parlor.create_room("Over TLS")
        alice = await parlor.session("alice")
        bob = await parlor.session("bob")
        await alice.join(room)
        await bob.join(room)
        await alice.expect(member_joined(name="bob"), timeout=5)
        alice.drop_connection()  # over wss too: reconnect and resume
        await alice.expect_state("resumed", timeout=10)
    finally:
        await parlor.close()


def test_without_its_certificate_the_client_refuses_the_server(tls_process):
    asyncio.run(asyncio.wait_for(untrusted(tls_process), 30))


async def untrusted(tls_process):
    for server in (ParlorServer(tls_process.url), ParlorServer(tls_process.url.replace("https:", "wss:"))):
        try:
            with pytest.raises(ParlorError) as refused:
                await server.auth("mallory")
            assert refused.value.code == "client:error:tls"
            assert "certificate" in str(refused.value)
        finally:
            await server.close()



def test_an_audio_member_trusts_the_servers_certificate_too(tls_process, tmp_path):
    asyncio.run(asyncio.wait_for(audio_over_tls(tls_process, tmp_path), 30))


async def audio_over_tls(tls_process, tmp_path):
    from parlor.audio import assert_heard, make_tone
    parlor = TestParlor(tls_process)
    try:
        room = await parlor.create_room("Audio over TLS")
        tone = make_tone(tmp_path / "alice.opus", 440, seconds=1)
        async with parlor.audio_member("bob-ears", room, record=tmp_path / "bob.ogg") as bob:
            async with parlor.audio_member("alice-mic", room, play=tone) as alice:
                await alice.play_ended(timeout=15)
        assert bob.command[bob.command.index("--ca-file") + 1] == tls_process.ca_file
        assert_heard(tmp_path / "bob.ogg", 440)
    finally:
        await parlor.close()
