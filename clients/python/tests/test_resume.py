"""Drops, resume, the grace period, the claim, and the close codes that end a session."""

from parlor import ParlorServer, member_joined, member_left, message


async def test_a_dropped_connection_resumes_and_replays_what_it_missed(parlor_server):
    room = await parlor_server.create_room()
    alice = await parlor_server.session("alice")
    bob = await parlor_server.session("bob")
    await alice.join(room)
    await bob.join(room)
    first_session = alice.session_id

    alice.hold_reconnects()
    alice.drop_connection()  # like a network failure: no close frame
    await alice.expect_state("reconnecting")
    await bob.send_message(room, "while you were away")
    alice.release_reconnects()

    state = await alice.expect_state("resumed")
    assert state.resumed == [room.id] and state.lost == []
    assert alice.session_id != first_session and alice.joined_rooms == [room.id]
    await alice.expect(message(text="while you were away", name="bob"))
    assert len(alice.all(message(text="while you were away"))) == 1  # replayed once, not twice
    await bob.expect_none(member_left(name="alice"), timeout=2.5)  # past the 2 s grace period: she never left
    assert (await alice.ping()) == {}


async def test_dropped_past_the_grace_period_the_room_is_lost(parlor_server):
    room = await parlor_server.create_room()
    alice = await parlor_server.session("alice")
    bob = await parlor_server.session("bob")
    membership = await alice.join(room)
    await bob.join(room)

    alice.hold_reconnects()
    assert await parlor_server.drop(room, membership.member_id) >= 1  # server side, test mode
    await alice.expect_state("reconnecting")
    await bob.expect(member_left(reason="dropped", name="alice"), timeout=8)
    alice.release_reconnects()

    state = await alice.expect_state("resumed")
    assert state.lost == [room.id] and state.resumed == []
    assert state.lost_reasons == {room.id: "membership-ended"}
    assert alice.joined_rooms == []
    again = await alice.join(room)  # joining again brings her back as a new member
    assert again.member_id != membership.member_id


async def test_the_claim_keeps_the_identity_across_logins(parlor_server):
    room = await parlor_server.create_room()
    alice = await parlor_server.session("alice")
    membership = await alice.join(room)
    user_id = alice.user["id"]

    again = await parlor_server.client.auth("alice")  # the client sends the claim it kept for alice
    assert again.user_id == user_id
    second_device = await parlor_server.session("alice")
    assert second_device.user["id"] == user_id
    assert (await second_device.join(room)).member_id == membership.member_id

    async with ParlorServer(parlor_server.url) as elsewhere:  # keeps no claim: a separate identity, same name
        stranger = await elsewhere.auth("alice")
        assert stranger.name == "alice" and stranger.user_id != user_id and stranger.claim != again.claim


async def test_a_server_reset_ends_the_session_for_good(parlor_server):
    alice = await parlor_server.session("alice")
    await parlor_server.reset()
    closed = await alice.expect_state("closed")
    assert closed.error is not None and closed.error.code == "session:error:server-reset"
    assert alice.is_closed


async def test_a_second_connection_resuming_takes_the_session_over(parlor_server):
    room = await parlor_server.create_room()
    alice = await parlor_server.session("alice")
    await alice.join(room)
    other = await parlor_server.session("alice")
    reply = await other.request("session:resume", {"session_id": alice.session_id, "last_event_ids": {room.id: 1}})
    assert [item["cid"] for item in reply["resumed"]] == [room.id]
    closed = await alice.expect_state("closed")
    assert closed.error.code == "session:error:taken-over"


async def test_a_watch_is_restored_after_a_resume_with_what_it_missed(parlor_server):
    room = await parlor_server.create_room()
    watcher = await parlor_server.session("watcher")
    alice = await parlor_server.session("alice")
    await watcher.watch(room)
    await alice.join(room)
    await watcher.expect(member_joined(name="alice"))

    watcher.hold_reconnects()
    watcher.drop_connection()
    await watcher.expect_state("reconnecting")
    await alice.send_message(room, "missed while away")
    watcher.release_reconnects()
    state = await watcher.expect_state("resumed")
    assert state.watches_lost == []
    await watcher.expect(message(text="missed while away"))  # read from the history after watching again
    await alice.send_message(room, "live again")
    await watcher.expect(message(text="live again"))
    ids = [event.id for event in watcher.received if event.id is not None]
    assert ids == sorted(set(ids))  # each event once, in order
