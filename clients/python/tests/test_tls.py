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

