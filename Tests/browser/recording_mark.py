#!/usr/bin/env python3
"""The recording mark in real (headless) Chromium browsers (issue 38): everyone in a room sees that it is recorded.

Run by run.sh inside the loopback-only network namespace. alice creates a room (its creator may record it); bob joins.
alice starts a recording from her moderator tools: the red mark naming her appears on both pages, before anyone
unmutes. carol joins while it runs and sees the mark at once (from her join reply). alice stops it: the mark goes
from every page. Saves carol's page as PARLOR_RECORDING_SCREENSHOT (docs/images/recording-mark.png). Then the live
stream: a player reads GET /rooms/{id}/live.ogg with alice's token, and every page shows "1 listening to the live
stream" until it stops. Ends with `recording: N passed, M failed`.
"""
import os
import urllib.request

from browser_support import REPO, Person, check, click_join, enter_room, run_script, wait_for

SCREENSHOT = os.environ.get("PARLOR_RECORDING_SCREENSHOT", os.path.join(REPO, "docs/images/recording-mark.png"))
ROOM_NAME = "Podcast panel"


def mark(person):
    """The mark's text when it is shown, else None."""
    element = person.visible("#recording-mark")
    return element.text if element else None


def live_mark(person):
    """The live stream's mark when it is shown, else None."""
    element = person.visible("#live-mark")
    return element.text if element else None


def scenario(server):
    alice = Person("alice", server.url)
    bob = Person("bob", server.url, alice.browser)
    people = [alice, bob]
    for person in people:
        person.sign_in()
    enter_room(alice, bob, ROOM_NAME, prefix="recording: ")
    check("recording: no mark before a recording", mark(alice) is None and mark(bob) is None)

    record = wait_for("alice's record button", lambda: alice.visible("#record"))
    check("recording: the room's creator has the record button", record is not None and record.text == "Start recording",
          record.text if record else "")
    if record:
        record.click()
    for person in people:
        shown = wait_for(f"the mark on {person.name}'s page", lambda: mark(person))
        check(f"recording: {person.name} sees the mark naming who started it",
              shown and "Recording" in shown and "alice" in shown, shown or "")
    check("recording: alice's button now stops it", alice.find("#record").text == "Stop recording")
    check("recording: bob, not the creator, has no record button", bob.visible("#record") is None)

    carol = Person("carol", server.url, alice.browser)
    people.append(carol)
    carol.sign_in()
    click_join(carol, ROOM_NAME)
    carol_in = wait_for("carol in the room", lambda: carol.visible("#room-view") and carol.hook("memberId"))
    shown = mark(carol) if carol_in else None  # at once: the join reply says so, no event awaited
    check("recording: carol, joining mid-recording, sees the mark at once", shown and "alice" in shown, shown or "")
    if shown:
        carol.driver.save_screenshot(SCREENSHOT)

    stop = alice.visible("#record")
    if stop:
        stop.click()
    for person in people:
        gone = wait_for(f"the mark gone from {person.name}'s page", lambda: mark(person) is None)
        check(f"recording: the mark goes from {person.name}'s page when it stops", gone)
    check("recording: alice may record again", alice.find("#record").text == "Start recording")

    # Nobody listens unseen: a player on the live stream shows on every page as a count.
    check("live: no mark while nobody listens", all(live_mark(person) is None for person in people))
    token = alice.js("return sessionStorage.getItem('parlor.jwt')")
    request = urllib.request.Request(f"{server.url}/rooms/{alice.hook('roomId')}/live.ogg",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as stream:
        check("live: the stream is Ogg", stream.read(4) == b"OggS")
        for person in people:
            shown = wait_for(f"the live mark on {person.name}'s page", lambda: live_mark(person))
            check(f"live: {person.name} sees one listener", shown and shown.startswith("1 listening"), shown or "")
    for person in people:
        gone = wait_for(f"the live mark gone from {person.name}'s page", lambda: live_mark(person) is None)
        check(f"live: the mark goes from {person.name}'s page when the player stops", gone)
    return people


if __name__ == "__main__":
    run_script("recording", scenario, "--auth-rate", "0")
