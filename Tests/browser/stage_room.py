#!/usr/bin/env python3
"""A stage room in real (headless) Chromium browsers: a moderator brings a listener on stage.

Run by run.sh inside the loopback-only network namespace, after two_users_talk.py. alice creates a stage room (she
is its moderator and speaks); bob and carol join as the audience, without being asked for a microphone. bob
raises his hand by keyboard (the button is reached with Tab and toggles with Space and Enter), carol raises hers
after him, and alice's page lists the hands in that order. alice opens the menu on bob's tile by keyboard and
invites him to speak: his hand goes down, his page turns the microphone on, his tile moves to the stage on
carol's page, and carol (still in the audience) hears him (bytes grow and the level is above 0 on her WebRTC
statistics). Then chat and reactions reach the others, alice locks the room: dave, new, is refused with the
reason shown, while carol, who was in, leaves and comes back with the chat history. carol's page is also checked at
phone width. Last, alice mutes everyone (bob's page goes quiet) and moves bob back to the audience: his page stops
sending. Through the server's forwarding unit (the default) bob's page offers again on each change, on one peer
connection. Saves the moderator's page as PARLOR_STAGE_SCREENSHOT (docs/images/stage-room.png; with
fonts-noto-color-emoji installed the emoji are in colour). Ends with `stage: N passed, M failed`.

With PARLOR_BROWSER_CLUSTER=1 (issue 41) the pages open nginx in front of two nodes sharing one PostgreSQL
(cluster_support.py): nginx spreads the pages over both, and the checks add that a listener on another node than bob
hears him, his packets crossing the nodes' media link (the database says where each member is, each node's /metrics
counts the connections, sessions and link packets).
"""
import os
import sys
import time
import traceback

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser_support import REPO, Person, Server, audio_flows, check, click_join, results, run_scenario, wait_for
from cluster_support import CLUSTER, Cluster

SCREENSHOT = os.environ.get("PARLOR_STAGE_SCREENSHOT", os.path.join(REPO, "docs/images/stage-room.png"))
ROOM_NAME = "Town hall"


def active_id(person):
    return person.js("return document.activeElement && document.activeElement.id")


def tile_in(person, list_id, member_id):
    return person.driver.find_elements(By.CSS_SELECTOR, f'#{list_id} .tile[data-member-id="{member_id}"]')


def tile_of(person, member_id):
    """A member's tile, on the stage or in the audience."""
    tiles = person.driver.find_elements(By.CSS_SELECTOR, f'.tile[data-member-id="{member_id}"]')
    return tiles[0] if tiles else None


def mark_shown(person, member_id, mark):
    tile = tile_of(person, member_id)
    return tile is not None and tile.find_element(By.CSS_SELECTOR, mark).is_displayed()


def role_everywhere(people, member_id, role):
    return all(any(m["member_id"] == member_id and m.get("role") == role for m in p.hook("members") or [])
               for p in people)


def join_from_list(person):
    click_join(person, ROOM_NAME)
    return wait_for(f"{person.name} in the room", lambda: person.visible("#room-view") and person.hook("memberId"))


def chat_lines(person):
    """The chat panel's messages as "sender: text"."""
    return person.js("""return [...document.querySelectorAll('#chat-log li')].map((li) =>
        `${li.querySelector('.chat-name').textContent}: ${li.querySelector('.chat-text').textContent}`)""")


def stage(server):
    alice = Person("alice", server.url)
    people = [alice]
    try:
        bob = Person("bob", server.url)
        people.append(bob)
        carol = Person("carol", server.url)
        people.append(carol)
        if not (alice.sign_in() and bob.sign_in() and carol.sign_in()):
            check("stage: three people sign in", False)
            return people

        # alice creates a stage room: she moderates it and speaks.
        Select(alice.find("#create-mode")).select_by_value("stage")
        alice.find("#create-name").send_keys(ROOM_NAME, Keys.ENTER)
        alice_id = wait_for("alice in the room", lambda: alice.visible("#room-view") and alice.hook("memberId"))
        check("stage: alice creates a stage room and moderates it",
              alice_id and alice.hook("mode") == "stage" and alice.hook("role") == "moderator"
              and wait_for("alice sending", lambda: alice.hook("sending")) and alice.visible("#moderator-tools"),
              f"mode {alice.hook('mode')}, role {alice.hook('role')}, sending {alice.hook('sending')}")

        # The lobby marks a stage room as such (GET /rooms has the mode in properties).
        badge = wait_for("the stage badge in bob's list", lambda: bob.js(
            """const join = document.querySelector(`#room-list button[aria-label="Join ${arguments[0]}"]`);
               const badge = join?.closest('li')?.querySelector('.badge:not(.e2ee)');
               return badge && !badge.hidden && badge.textContent.includes('stage') ? badge.textContent : null;""",
            ROOM_NAME), timeout=15)
        check("stage: the room list marks the room as a stage", bool(badge), f"badge {badge!r}")

        # bob and carol join as the audience, without a microphone.
        bob_id, carol_id = join_from_list(bob), join_from_list(carol)
        if not (alice_id and bob_id and carol_id):
            check("stage: bob and carol join from the list", False)
            return people
        everyone = [alice, bob, carol]
        check("stage: bob and carol join as listeners, not asked for a microphone",
              bob.hook("role") == "listener" and carol.hook("role") == "listener" and not bob.hook("sending")
              and bob.js("return window.microphoneRequests") == 0 and carol.js("return window.microphoneRequests") == 0,
              f"roles {bob.hook('role')}/{carol.hook('role')}, microphone requests "
              f"{bob.js('return window.microphoneRequests')}/{carol.js('return window.microphoneRequests')}")
        check("stage: alice's page shows bob and carol in the audience", wait_for("the audience", lambda: (
            tile_in(alice, "audience", bob_id) and tile_in(alice, "audience", carol_id)
            and tile_in(alice, "tiles", alice_id))))
        check("stage: listeners get no moderator tools or tile menus",
              not bob.visible("#moderator-tools") and not bob.visible("#tiles .menu-button"))

        # The raise-hand button, by keyboard: Tab reaches it, Space and Enter toggle it.
        bob.js("document.getElementById('room-title').focus()")
        for _ in range(40):
            if active_id(bob) == "hand":
                break
            bob.driver.switch_to.active_element.send_keys(Keys.TAB)
        check("stage: Tab reaches bob's Raise hand button", active_id(bob) == "hand",
              f"focus on #{active_id(bob)}")
        bob.driver.switch_to.active_element.send_keys(Keys.SPACE)
        check("stage: Space raises bob's hand (button pressed, alice sees it)", wait_for("bob's hand up", lambda: (
            bob.find("#hand").get_attribute("aria-pressed") == "true" and bob.find("#hand").text == "Lower hand"
            and mark_shown(alice, bob_id, ".hand-mark")), timeout=5))
        bob.driver.switch_to.active_element.send_keys(Keys.SPACE)
        check("stage: Space again lowers it", wait_for("bob's hand down", lambda: (
            bob.find("#hand").get_attribute("aria-pressed") == "false" and not mark_shown(alice, bob_id, ".hand-mark")),
            timeout=5))
        bob.driver.switch_to.active_element.send_keys(Keys.ENTER)
        wait_for("bob's hand up again", lambda: mark_shown(alice, bob_id, ".hand-mark"), timeout=5)
        carol.find("#hand").click()
        check("stage: alice sees both hands, in the order they were raised", wait_for("two hands in order", lambda: (
            mark_shown(alice, carol_id, ".hand-mark") and [e.get_attribute("data-member-id") for e in
                alice.driver.find_elements(By.CSS_SELECTOR, "#audience .tile.hand")] == [bob_id, carol_id]), timeout=5),
              " ".join(e.get_attribute("aria-label") for e in alice.driver.find_elements(By.CSS_SELECTOR, "#audience .tile")))

        # alice opens the menu on bob's tile by keyboard and invites him to speak.
        menu_button = tile_of(alice, bob_id).find_element(By.CSS_SELECTOR, ".menu-button")
        alice.js("arguments[0].focus()", menu_button)
        menu_button.send_keys(Keys.ENTER)
        first = wait_for("the tile menu", lambda: (
            menu_button.get_attribute("aria-expanded") == "true" and alice.driver.switch_to.active_element.text))
        check("stage: Enter opens the tile menu with focus on its first item", first == "Invite to speak",
              f"focused {first!r}; menu button {menu_button.get_attribute('aria-label')!r}")
        alice.driver.switch_to.active_element.send_keys(Keys.ENTER)
        check("stage: bob is a speaker on every page, his hand lowered", wait_for("bob promoted", lambda: (
            role_everywhere(everyone, bob_id, "speaker") and not mark_shown(alice, bob_id, ".hand-mark"))),
              f"bob's role on alice's page: {[m.get('role') for m in alice.hook('members') if m['member_id'] == bob_id]}")
        check("stage: bob's page turns his microphone on", wait_for("bob sending", lambda: (
            bob.hook("sending") and bob.js("return window.microphoneRequests") == 1 and not bob.visible("#hand"))),
              f"sending {bob.hook('sending')}, note {bob.find('#room-note').text!r}")
        stage_offers = None
        if bob.hook("mediaMode") == "sfu":
            check("stage: bob's page offers again with his microphone, on the same peer connection", wait_for(
                "bob's second offer", lambda: bob.hook("offers") >= 2 and bob.open_peer_connections() == 1
                and bob.made_peer_connections() == 1, timeout=10),
                  f"offers {bob.hook('offers')}, open {bob.open_peer_connections()}, made {bob.made_peer_connections()}")
            stage_offers = bob.hook("offers")
        check("stage: bob's tile moves to the stage on carol's page",
              wait_for("bob on carol's stage", lambda: tile_in(carol, "tiles", bob_id), timeout=5))
        carol_hears, seen = audio_flows(carol, bob_id)
        check("stage: carol, in the audience, hears bob (bytes grow, level > 0)", carol_hears, seen)
        alice_hears, seen = audio_flows(alice, bob_id)
        check("stage: alice hears bob", alice_hears, seen)
        if isinstance(server, Cluster):
            server.check_audio_crossed("stage", ("bob", bob_id),
                                       [("alice", alice_id, alice_hears), ("carol", carol_id, carol_hears)])

        # Chat (typed and sent with Enter) and a reaction reach the others.
        carol.find("#chat-text").send_keys("Could you say more about the budget?", Keys.ENTER)
        bob.find("#chat-text").send_keys("Sure, one moment.", Keys.ENTER)
        check("stage: chat messages reach everyone with their sender", wait_for("the chat", lambda: all(
            chat_lines(p) == ["carol: Could you say more about the budget?", "bob: Sure, one moment."] for p in everyone),
            timeout=5), f"alice's chat: {chat_lines(alice)}")
        carol.find('#reactions button[data-emoji="👏"]').click()
        def reaction_shown(person):
            return mark_shown(person, carol_id, ".tile-reaction") and tile_of(person, carol_id).find_element(
                By.CSS_SELECTOR, ".tile-reaction").text == "👏"
        # alice's page: with two nodes (PARLOR_BROWSER_CLUSTER=1) it is on another node than carol's in every run
        # seen, and a reaction (never stored) reaches it relayed between the nodes.
        check("stage: carol's reaction shows on her tile", wait_for("the reaction", lambda: reaction_shown(alice), timeout=5),
              "on alice's page")

        # The picture for the README: the moderator's view, with the stage, the audience and the chat.
        alice.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                     {"width": 1000, "height": 720, "deviceScaleFactor": 1, "mobile": False})
        alice.js("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
        os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
        check("stage: screenshot of alice's stage room saved", alice.driver.save_screenshot(SCREENSHOT), SCREENSHOT)

        # At phone width (carol's page, 390 px): nothing overflows sideways, and the hand, chat and reactions are there.
        carol.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                     {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        check("stage: at phone width nothing overflows and the controls are shown", wait_for("the phone layout", lambda: (
            carol.js("return document.documentElement.scrollWidth") <= 390
            and all(carol.visible(css) for css in ("#hand", "#chat-text", "#reactions button", "#leave")))),
              f"page width {carol.js('return document.documentElement.scrollWidth')}")
        carol.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                     {"width": 1000, "height": 700, "deviceScaleFactor": 1, "mobile": False})

        # The lock keeps new people out, and tells them why; carol, who was in, may leave and come back, and gets
        # the chat history.
        alice.find("#lock").click()
        check("stage: the lock shows on every page", wait_for("locked", lambda: all(
            p.visible("#room-locked") for p in everyone) and alice.find("#lock").text == "Unlock room", timeout=5))
        dave = Person("dave", server.url)
        people.append(dave)
        if check("stage: dave signs in", dave.sign_in()):
            click_join(dave, ROOM_NAME, timeout=10)
            check("stage: dave, new, cannot join the locked room and is told why", wait_for("the refusal", lambda: (
                "locked" in dave.find("#status").text and dave.visible("#lobby-view") and not dave.hook("roomId"))),
                  f"status {dave.find('#status').text!r}")
        carol.find("#leave").click()
        click_join(carol, ROOM_NAME, timeout=10)
        check("stage: carol comes back into the locked room and gets the chat history", wait_for("carol back", lambda: (
            carol.hook("roomId") and chat_lines(carol)
            == ["carol: Could you say more about the budget?", "bob: Sure, one moment."])),
              f"room {carol.hook('roomId')}, chat: {chat_lines(carol)}, status {carol.find('#status').text!r}")
        alice.find("#lock").click()
        check("stage: alice unlocks the room", wait_for("unlocked", lambda: (
            not alice.hook("locked") and not carol.visible("#room-locked")), timeout=5))

        # Mute everyone: bob's microphone goes quiet (his button turns into Unmute) and the others see his mark.
        alice.find("#mute-all").click()
        check("stage: Mute everyone mutes bob, on his page and on carol's", wait_for("bob muted", lambda: (
            bob.hook("muted") and bob.find("#mute").text == "Unmute" and mark_shown(carol, bob_id, ".muted-mark"))
            and not alice.hook("muted"), timeout=5), f"bob muted {bob.hook('muted')}")

        # Back to the audience (by mouse this time): bob's page stops sending and offers the hand again.
        tile_of(alice, bob_id).find_element(By.CSS_SELECTOR, ".menu-button").click()
        item = wait_for("Move to audience", lambda: next((b for b in tile_of(alice, bob_id).find_elements(
            By.CSS_SELECTOR, ".menu button") if b.text == "Move to audience" and b.is_displayed()), None), timeout=5)
        if item:
            item.click()
        check("stage: moved back to the audience, bob's page stops sending", wait_for("bob demoted", lambda: (
            bob.hook("role") == "listener" and not bob.hook("sending") and bob.visible("#hand")
            and tile_in(carol, "audience", bob_id))),
              f"role {bob.hook('role')}, sending {bob.hook('sending')}")
        if stage_offers is not None:
            check("stage: bob's page offers again without a microphone; carol gets nothing from him", wait_for(
                "bob's offer without a microphone", lambda: bob.hook("offers") > stage_offers and not any(
                    mid == "0" and direction == "sendonly" for mid, direction in bob.js(
                        "return window.parlor.serverConnection.getTransceivers().map((t) => [t.mid, t.direction])"))
                and bob_id not in (carol.hook("slots") or {}).values(), timeout=10),
                  f"offers {bob.hook('offers')}, carol's slots {carol.hook('slots')}")
    except Exception:
        traceback.print_exc()
        check("the stage scenario ran to the end", False, "exception above")
    return people


def main():
    try:
        server = Cluster(nodes=2) if CLUSTER else Server()
    except Exception as error:
        check("stage: the server starts", False, str(error))
        server = None
    if server:
        run_scenario("stage", server, stage)
    passed = sum(1 for r in results if r[1])
    failed = len(results) - passed if results else 1
    print(f"stage: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    start = time.monotonic()
    status = main()
    print(f"stage: {time.monotonic() - start:.0f} s", flush=True)
    sys.exit(status)
