"""Rooms, join/leave and typed errors against the real binary (parlor_server: `parlor serve --dev`)."""

import pytest

from parlor import MemberError, RequestError, RoomError, UnexpectedEvent, EventTimeout
from parlor import member_joined, member_left


async def test_join_and_leave_are_seen_by_the_other_member(parlor_server):
    room = await parlor_server.create_room("Standup")
    bob = await parlor_server.session("bob")
    alice = await parlor_server.session("alice")
    bob_in = await bob.join(room)
    alice_in = await alice.join(room.id)
    assert alice_in.room == room.id and alice_in.member_id != bob_in.member_id
    assert [m["user"]["name"] for m in alice_in.members] == ["bob", "alice"]

    joined = await bob.expect(member_joined(name="alice", room=room))
    assert joined.member_id == alice_in.member_id and joined.id == alice_in.last_event_id
    await alice.leave(room)
    left = await bob.expect(member_left(reason="left", name="alice"))
    assert left.member_id == alice_in.member_id
    assert alice.joined_rooms == [] and bob.joined_rooms == [room.id]


async def test_rooms_are_listed_created_with_properties_and_read_back(parlor_server):
    client = parlor_server.client
    created = await parlor_server.create_room("Town hall", creator="carol", mode="stage", ttl=600)
    assert created.mode == "stage" and created.properties["ttl"] == 600
    assert (await client.room(created.id)).display_name == "Town hall"
    assert created.id in [room.id for room in await client.rooms()]
    history = await client.events(created)
    assert history["events"] == []


async def test_the_fixture_resets_the_server_before_each_test(parlor_server):
    # The tests above created rooms on the same server process; the reset before this test removed them.
    assert await parlor_server.client.rooms() == []


async def test_errors_carry_the_servers_codes(parlor_server):
    alice = await parlor_server.session("alice")
    with pytest.raises(RoomError) as over_ws:
        await alice.join("RM-does-not-exist")
    assert over_ws.value.code == "room:error:not-found" and over_ws.value.request_type == "conversation:join"

    with pytest.raises(RoomError) as over_http:
        await parlor_server.client.room("RM-does-not-exist")
    assert over_http.value.code == "room:error:not-found" and over_http.value.status == 404
    assert over_http.value.title and over_http.value.detail  # the server's {code, title, detail}

    with pytest.raises(RequestError) as unknown:
        await alice.request("no:such-type", {"cid": "x"})
    assert unknown.value.code == "request:error:unknown-type"

    room = await parlor_server.create_room()
    with pytest.raises(MemberError) as not_joined:
        await alice.send_message(room, "hello?")
    assert not_joined.value.code == "member:error:not-joined"


async def test_expect_none_failure_lists_every_event_received(parlor_server):
    room = await parlor_server.create_room()
    bob = await parlor_server.session("bob")
    await bob.join(room)
    alice = await parlor_server.session("alice")
    await alice.join(room)
    with pytest.raises(UnexpectedEvent) as caught:
        await bob.expect_none(member_joined(name="alice"), timeout=2)
    text = str(caught.value)
    assert "did not expect member:joined (name: alice)" in text
    assert "member:joined #1" in text and "(bob)" in text and "member:joined #2" in text and "(alice)" in text


async def test_expect_failure_lists_every_event_received(parlor_server):
    room = await parlor_server.create_room()
    bob = await parlor_server.session("bob")
    await bob.join(room)
    with pytest.raises(EventTimeout) as caught:
        await bob.expect(member_left(reason="kicked"), timeout=0.3)
    text = str(caught.value)
    assert "no member:left (reason: kicked) within 0.3 s on bob's session" in text
    assert "received 1 event(s)" in text and "member:joined #1" in text and "(bob)" in text
