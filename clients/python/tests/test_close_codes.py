"""Close codes that need a server of their own: token expiry (4001) and shutdown (1001) with no server to come back."""

import asyncio

from parlor import ParlorServer, ReconnectPolicy
from parlor.testserver import ParlorProcess, find_parlor_binary


def test_an_expired_token_logs_in_again_with_the_claim_and_resumes():
    process = ParlorProcess(find_parlor_binary(), ["--token-ttl", "2"])

    async def scenario():
        async with ParlorServer(process.url) as server:
            room = await server.create_room("Expiry")
            alice = await server.session("alice")  # by name: the session can log in again when the token expires
            user_id = alice.user["id"]
            await alice.join(room)
            reconnecting = await alice.expect_state("reconnecting", timeout=6)
            assert "4001" in str(reconnecting.error)
            resumed = await alice.expect_state("resumed", timeout=6)
            assert resumed.resumed == [room.id] and resumed.lost == []
            assert alice.user["id"] == user_id  # the kept claim gave the same identity back
            await alice.send_message(room, "still here")

    try:
        asyncio.run(asyncio.wait_for(scenario(), 30))
    finally:
        process.stop()


def test_a_server_that_stops_for_good_ends_the_session_after_bounded_retries():
    process = ParlorProcess(find_parlor_binary())

    async def scenario():
        policy = ReconnectPolicy(max_attempts=2, initial_delay=0.05, max_delay=0.1)
        async with ParlorServer(process.url, reconnect=policy) as server:
            alice = await server.session("alice")
            process.stop()  # SIGTERM: the server closes sockets with 1001, then is gone
            first = await alice.expect_state("reconnecting")
            assert "1001" in str(first.error)
            closed = await alice.expect_state("closed", timeout=10)
            assert closed.error.code == "client:error:reconnect-failed"
            assert "client:error:connection-failed" in closed.error.detail

    try:
        asyncio.run(asyncio.wait_for(scenario(), 30))
    finally:
        process.stop()
