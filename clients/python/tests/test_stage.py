"""A stage room: roles, hands, promotion, and the other request types a moderator and a member send."""

import pytest

from parlor import MemberError, event_type, member_hand, member_joined, member_role, message


async def test_a_raised_hand_is_promoted_to_speaker(parlor_server):
    room = await parlor_server.create_room("Stage", creator="alice", mode="stage")
    alice = await parlor_server.session("alice")  # the creator (same identity: the claim was kept)
    bob = await parlor_server.session("bob")
    assert (await alice.join(room)).role == "moderator"
    bob_in = await bob.join(room)
    assert bob_in.role == "listener" and bob_in.mode == "stage"

    with pytest.raises(MemberError) as refused:
        await bob.enable_audio(room)
    assert refused.value.code == "member:error:not-allowed"

    await bob.raise_hand(room)
    await alice.expect(member_hand(raised=True, name="bob"))
    hands = await alice.members(room, hands=True)
    assert [m["member_id"] for m in hands["members"]] == [bob_in.member_id]

    await alice.set_role(room, bob_in.member_id, "speaker")
    await bob.expect(member_hand(raised=False, name="bob"))  # promotion lowers the hand first
    promoted = await bob.expect(member_role("speaker", name="bob"))
    assert promoted.body["by"] == alice.member_id(room.id)
    await bob.enable_audio(room)
    await alice.expect(event_type("member:media", room=room))


async def test_chat_reactions_mute_and_lock(parlor_server):
    room = await parlor_server.create_room("Open", creator="alice")
    alice = await parlor_server.session("alice")
    bob = await parlor_server.session("bob")
    await alice.join(room)
    await bob.join(room)
    await alice.expect(member_joined(name="bob"))

    sent = await bob.send_message(room, "Hello everyone")
    chat = await alice.expect(message(text="Hello everyone", name="bob"))
    assert chat.id == sent["id"]
    await bob.react(room, "👏")
    assert (await alice.expect(type="reaction", name="bob")).body["emoji"] == "👏"

    await bob.enable_audio(room)
    assert (await alice.mute_all(room))["muted"] == 1
    await bob.expect(type="audio:mute:on", name="bob")
    await bob.unmute(room)
    await alice.expect(type="audio:mute:off", name="bob")

    await alice.lock(room)
    assert (await bob.expect(type="room:locked")).body["locked"] is True
    carol = await parlor_server.session("carol")
    with pytest.raises(Exception) as locked_out:
        await carol.join(room)
    assert getattr(locked_out.value, "code", None) == "room:error:locked"
    await alice.unlock(room)
    await carol.join(room)

    history = await bob.history(room)
    assert "message:text" in [event["type"] for event in history["events"]]
