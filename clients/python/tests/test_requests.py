"""The request types not covered elsewhere, each checked by its reply or the event it causes."""

import asyncio

from parlor import member_joined


async def test_watch_history_members_and_media_state(parlor_server):
    room = await parlor_server.create_room("Tour", creator="alice")
    alice = await parlor_server.session("alice")
    watcher = await parlor_server.session("watcher")
    watched = await watcher.watch(room)
    await alice.join(room)
    await watcher.expect(member_joined(name="alice"))  # a watcher gets events without joining
    assert watched["last_event_id"] == 0

    await alice.enable_audio(room)
    await alice.speaking(room, True)
    await alice.mute(room)
    await alice.disable_audio(room)
    await alice.media_close(room)  # nothing to close is not an error
    types = [(await watcher.expect(type=t)).type for t in ("member:media", "audio:mute:on", "member:media")]
    assert types == ["member:media", "audio:mute:on", "member:media"]
    await watcher.unwatch(room)

    page = await alice.members(room, page_size=10)
    assert [m["user"]["name"] for m in page["members"]] == ["alice"]
    history = await alice.history(room, since=1)
    assert [e["type"] for e in history["events"]][:2] == ["member:media", "audio:mute:on"]
    rest = await parlor_server.client.members(room)
    assert [m["member_id"] for m in rest["members"]] == [alice.member_id(room.id)]


async def test_ban_and_the_live_stream(parlor_server):
    room = await parlor_server.create_room("Tour", creator="alice")
    alice = await parlor_server.session("alice")
    bob = await parlor_server.session("bob")
    await alice.join(room)
    await bob.join(room)
    stream = await alice.set_stream_public(room, True)
    assert stream["public"] is True
    assert (await bob.expect(type="room:stream")).body["public"] is True
    until = await alice.ban(room, bob.user["id"], 60)
    assert "until" in until
    await alice.expect(type="member:left", name="bob", reason="kicked")


async def test_recording_starts_and_stops(parlor_server):
    room = await parlor_server.create_room("Tour", creator="alice")
    alice = await parlor_server.session("alice")
    await alice.join(room)
    started = await alice.start_recording(room)
    assert (await alice.expect(type="room:recording")).body == {"on": True, "by": alice.member_id(room.id),
                                                                  "recording_id": started["recording_id"]}
    stopped = await alice.stop_recording(room)
    assert stopped["recording_id"] == started["recording_id"]
    assert (await alice.expect(type="room:recording")).body["on"] is False


async def test_an_encrypted_room_relays_key_messages_and_ciphertext(parlor_server):
    room = await parlor_server.create_room("Private", creator="alice", e2ee=True)
    alice = await parlor_server.session("alice")
    bob = await parlor_server.session("bob")
    assert (await alice.join(room, e2ee=True)).body["e2ee"] is True
    await bob.join(room, e2ee=True)
    await alice.expect(member_joined(name="bob"))
    await alice.send_e2ee_key(room, {"v": 1, "public_key": "QUJD", "identity_key": "REVG", "signature": "R0hJ",
                                     "keys": [{"to": bob.member_id(room.id), "key_id": 1, "wrapped": "SktM"}]})
    relayed = await bob.expect(type="e2ee:key")
    assert relayed.body["public_key"] == "QUJD" and relayed.from_member == alice.member_id(room.id)
    await alice.send_message(room, ciphertext="AQFzZWNyZXQ=")
    assert (await bob.expect(type="message:text")).body["ciphertext"] == "AQFzZWNyZXQ="


async def test_independent_subscribers_and_requests_during_a_reconnect(parlor_server):
    room = await parlor_server.create_room()
    alice = await parlor_server.session("alice")
    seen = []

    async def first_two():
        async for event in alice.events():
            seen.append(event.type)
            if len(seen) == 2:
                return

    reader = asyncio.create_task(first_two())
    await asyncio.sleep(0)  # let the subscriber register before the events it should see
    await alice.join(room)
    alice.drop_connection()
    sent = await alice.send_message(room, "sent while reconnecting")  # waits for the resume, then goes out
    await asyncio.wait_for(reader, 5)
    assert seen == ["member:joined", "message:text"]
    assert (await alice.expect(type="message:text")).id == sent["id"]
