#!/usr/bin/env python3
"""Two people talk through Parlor's built-in web client, in real (headless) Chromium browsers.

Run by run.sh inside a network namespace that has only `lo`, so WebRTC stays on loopback. It starts the server
(PARLOR_BIN) on a free port with an in-memory database, signs in alice and bob, has alice create a room that both
join, and checks what a person would: each sees the other, audio flows both ways (each browser's fake microphone
plays its own notes: browser_support.py), mute shows on the other side and silences the audio, a dropped socket
resumes, and leaving removes the tile. The talk runs twice: through the server's forwarding unit (the default, one
peer connection per page) and through the browser mesh (`--media mesh`). Saves docs/screenshot-room.png. A server that lets one member send
checks a listener (receive only); another checks that a shared room link asks before joining and turning the
microphone on; one has another connection take the page's session over (close 4005) and checks the page stops
rather than taking it back; the last serves HTTPS with --tls-self-signed, as on a LAN, and two people open it and talk.
Ends with `browser: N passed, M failed`. The pieces every script uses are in browser_support.py.
"""
import os
import sys
import tempfile
import traceback

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_support import (CHROMEDRIVER, CHROMIUM, PARLOR_BIN, REPO, Browser, Person, Server, audio_flows, check,
                             enter_room, results, run_scenario, silent, wait_for)

SCREENSHOT = os.environ.get("PARLOR_SCREENSHOT", os.path.join(REPO, "docs/screenshot-room.png"))
ROOM_NAME = "Friday chat"


def talk(server, prefix="", screenshot=True):
    """alice and bob talk, mute, reconnect and leave. prefix names the checks of a second run (the mesh)."""
    alice = Person("alice", server.url)
    people = [alice]
    try:
        bob = Person("bob", server.url)
        people.append(bob)
        check(f"{prefix}alice signs in and connects", alice.sign_in())
        check(f"{prefix}bob signs in and connects", bob.sign_in())

        alice_id, bob_id = enter_room(alice, bob, ROOM_NAME, prefix)
        if not (alice_id and bob_id):
            return people

        check(f"{prefix}alice sees bob's tile", wait_for("bob's tile on alice's page", lambda: "bob" in alice.tile_names()),
              f"tiles: {alice.tile_names()}")
        check(f"{prefix}bob sees alice's tile", wait_for("alice's tile on bob's page", lambda: "alice" in bob.tile_names()),
              f"tiles: {bob.tile_names()}")
        check(f"{prefix}both are sending audio", wait_for("senders", lambda: alice.hook("sending") and bob.hook("sending")))

        connected = wait_for("peer connections", lambda: (
            alice.js("return window.parlor.peers[arguments[0]]?.connectionState", bob_id) == "connected"
            and bob.js("return window.parlor.peers[arguments[0]]?.connectionState", alice_id) == "connected"),
            timeout=20)
        check(f"{prefix}the peer connection is up on both sides", connected,
              f"alice→bob {alice.js('return window.parlor.peers[arguments[0]]?.connectionState', bob_id)}, "
              f"bob→alice {bob.js('return window.parlor.peers[arguments[0]]?.connectionState', alice_id)}")

        sfu = alice.hook("mediaMode") == "sfu"
        if sfu:
            check(f"{prefix}through the forwarding unit each page has one peer connection, to the server",
                  alice.open_peer_connections() == 1 and bob.open_peer_connections() == 1
                  and alice.js("return window.parlor.serverConnection === window.parlor.peers[arguments[0]]", bob_id),
                  f"alice {alice.open_peer_connections()}, bob {bob.open_peer_connections()}")
        else:
            check(f"{prefix}the mesh is what the server asked for", alice.hook("mediaMode") == "mesh"
                  and alice.hook("serverConnection") is None, str(alice.hook("mediaMode")))
        ok, seen = audio_flows(bob, alice_id)
        check(f"{prefix}bob hears alice (bytes grow, level > 0)", ok, seen)
        ok, seen = audio_flows(alice, bob_id)
        check(f"{prefix}alice hears bob (bytes grow, level > 0)", ok, seen)

        # Speaking: bob's sound lights his ring on alice's page (audio:speaking:on relayed by the server).
        check(f"{prefix}alice sees bob's speaking ring", wait_for("bob's ring on alice's page", lambda: (
            (tile := alice.tile_of(bob_id)) is not None and "speaking" in tile.get_attribute("class")),
            timeout=10, interval=0.05))

        # The picture for the docs: alice's room with two people, taken while both sounds light the speaking rings.
        wait_for("two speaking rings", lambda: len(alice.driver.find_elements(By.CSS_SELECTOR, "#tiles .tile.speaking")) == 2,
                 timeout=5, interval=0.05)
        if screenshot:
            os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
            check(f"{prefix}screenshot of alice's room saved", alice.driver.save_screenshot(SCREENSHOT), SCREENSHOT)

        # Mute: bob's page marks alice muted and what bob receives from her goes silent.
        alice.find("#mute").click()
        check(f"{prefix}alice's mute button turns into Unmute",
              wait_for("the Unmute label", lambda: alice.find("#mute").text == "Unmute", timeout=5))
        check(f"{prefix}bob sees alice's muted mark", wait_for("muted mark", lambda: (
            (tile := bob.tile_of(alice_id)) is not None
            and tile.find_element(By.CSS_SELECTOR, ".muted-mark").is_displayed()), timeout=5))
        ok, seen = silent(bob, alice_id)
        check(f"{prefix}bob's audio from alice drops to ~0 while she is muted", ok, seen)

        alice.find("#mute").click()
        check(f"{prefix}bob sees alice unmuted", wait_for("no muted mark", lambda: (
            (tile := bob.tile_of(alice_id)) is not None
            and not tile.find_element(By.CSS_SELECTOR, ".muted-mark").is_displayed()), timeout=5))
        ok, seen = audio_flows(bob, alice_id)
        check(f"{prefix}bob hears alice again after unmute", ok, seen)

        # A dropped socket: alice's client resumes its session by itself, keeps her membership and her audio.
        alice.js("window.parlor.dropConnection()")
        resumes = alice.hook("resumes")
        offers = alice.hook("offers")
        alice.js("window.parlor.dropConnection()")
        dropped = wait_for("alice's socket to drop", lambda: alice.hook("state") != "connected", timeout=5, interval=0.02)
        resumed = wait_for("alice to resume", lambda: alice.hook("resumes") > resumes, timeout=20)
        check(f"{prefix}alice's client reconnects by itself with session:resume",
              dropped and resumed and alice.hook("state") == "connected" and alice.hook("memberId") == alice_id
              and "bob" in alice.tile_names(),
              f"went {dropped}, state {alice.hook('state')}, resumes {alice.hook('resumes')}, member {alice.hook('memberId')}")
        check(f"{prefix}bob still sees alice after her reconnect", "alice" in bob.tile_names(), f"tiles: {bob.tile_names()}")
        if sfu:
            check(f"{prefix}after the resume alice's page offers again (an ICE restart) on the same peer connection",
                  wait_for("a new offer answered", lambda: alice.hook("offers") > offers)
                  and alice.open_peer_connections() == 1 and alice.made_peer_connections() == 1,
                  f"offers {offers} → {alice.hook('offers')}, {alice.open_peer_connections()} open, "
                  f"{alice.made_peer_connections()} made")
        ok, seen = audio_flows(bob, alice_id)
        check(f"{prefix}audio still flows after the reconnect", ok, seen)

        # Leave: bob's tile goes from alice's page and her connection to him is closed.
        bob.find("#leave").click()
        check(f"{prefix}bob is back in the lobby", wait_for("bob's lobby", lambda: bob.visible("#lobby-view"), timeout=5))
        if sfu:
            check(f"{prefix}bob's page closed its connection to the server", wait_for(
                "no open peer connection", lambda: bob.open_peer_connections() == 0, timeout=5))
        check(f"{prefix}bob's tile leaves alice's page", wait_for("bob's tile gone", lambda: (
            "bob" not in alice.tile_names() and bob_id not in (alice.js("return Object.keys(window.parlor.peers)") or []))),
            f"tiles: {alice.tile_names()}")
    except Exception:
        traceback.print_exc()
        check(f"{prefix}the talk scenario ran to the end", False, "exception above")
    return people


def listen(server):
    """A server that lets one member send: bob is a listener (receive only) and still hears alice."""
    alice = Person("alice", server.url)
    people = [alice]
    try:
        bob = Person("bob", server.url)
        people.append(bob)
        if not (alice.sign_in() and bob.sign_in()):
            check("listener: both sign in", False)
            return people
        alice_id, bob_id = enter_room(alice, bob, "Lecture", "listener: ")
        if not (alice_id and bob_id):
            return people
        check("listener: alice sends, bob only listens",
              wait_for("roles", lambda: alice.hook("sending") and not bob.hook("sending")
                       and "listening" in bob.find("#room-note").text),
              f"bob's note: {bob.find('#room-note').text!r}")
        check("listener: bob's Mute button is disabled", not bob.find("#mute").is_enabled())
        check("listener: alice sees bob marked as listening", wait_for("listening mark", lambda: (
            (tile := alice.tile_of(bob_id)) is not None
            and tile.find_element(By.CSS_SELECTOR, ".listener-mark").is_displayed()), timeout=5))
        ok, seen = audio_flows(bob, alice_id)
        check("listener: bob hears alice", ok, seen)
        sent = (alice.inbound(bob_id) or {}).get("bytesReceived", 0)
        check("listener: nothing comes from bob", sent == 0, f"{sent} bytes")
    except Exception:
        traceback.print_exc()
        check("the listener scenario ran to the end", False, "exception above")
    return people


def shared_link(server):
    """A shared link /#RM-… shows the room and asks: no join, and no microphone, until the person presses Join."""
    alice = Person("alice", server.url)
    people = [alice]
    try:
        if not alice.sign_in():
            check("shared link: alice signs in", False)
            return people
        alice.find("#create-name").send_keys("Shared", Keys.ENTER)
        room = wait_for("alice in the room", lambda: alice.visible("#room-view") and alice.hook("roomId"))
        bob = Person("bob", f"{server.url}/#{room}")
        people.append(bob)
        if not bob.sign_in():
            check("shared link: bob signs in", False)
            return people
        asked = wait_for("bob's invitation", lambda: bob.visible("#invite"))
        check("shared link: bob is shown the room and asked", asked and "Shared" in bob.find("#invite-text").text,
              bob.find("#invite-text").text if asked else "no invitation shown")
        check("shared link: no join and no microphone before Join",
              bob.hook("roomId") is None and bob.js("return window.microphoneRequests") == 0,
              f"room {bob.hook('roomId')}, microphone requests {bob.js('return window.microphoneRequests')}")
        if asked:
            bob.find("#invite-join").click()
        joined = wait_for("bob in the room", lambda: bob.hook("roomId") == room)
        check("shared link: Join joins the room, then asks for the microphone",
              joined and bob.js("return window.microphoneRequests") == 1,
              f"room {bob.hook('roomId')}, microphone requests {bob.js('return window.microphoneRequests')}")
    except Exception:
        traceback.print_exc()
        check("the shared link scenario ran to the end", False, "exception above")
    return people


def taken_over(server):
    """Close 4005: another connection resumes the page's session. The page stops, offline and saying why, instead of
    reconnecting: its resume would take the session back, and the two would trade it forever."""
    alice = Person("alice", server.url)
    people = [alice]
    try:
        if not alice.sign_in():
            check("taken over: alice signs in", False)
            return people
        alice.find("#create-name").send_keys("Taken", Keys.ENTER)
        wait_for("alice in the room", lambda: alice.visible("#room-view") and alice.hook("roomId"))
        # A second socket with alice's token resumes the page's session, as a copied session would.
        alice.js("""
            const socket = new WebSocket(`ws://${location.host}/ws?token=${encodeURIComponent(sessionStorage.getItem('parlor.jwt'))}`);
            window.takeover = { socket, closeCode: null, resumed: false };
            socket.onclose = (event) => { window.takeover.closeCode = event.code; };
            socket.onmessage = (message) => {
              const reply = JSON.parse(message.data);
              if (reply.type === 'session:success' && reply.tid == null) {
                socket.send(JSON.stringify({ type: 'session:resume', tid: 'take', body: {
                  session_id: window.parlor.sessionId, last_event_ids: {} } }));
              } else if (reply.tid === 'take') {
                window.takeover.resumed = reply.type !== 'error';
              }
            };""")
        ended = wait_for("alice's page to stop", lambda: alice.hook("state") == "offline" and alice.hook("endReason"))
        check("taken over: the page goes offline and says why", ended and alice.js("return window.takeover.resumed"),
              f"state {alice.hook('state')}, reason {alice.hook('endReason')}")
        # Had the page reconnected (its first retry comes after about half a second), its resume would close the
        # other socket with 4005.
        taken_back = wait_for("the other socket to be closed", lambda: alice.js("return window.takeover.closeCode"), timeout=3)
        check("taken over: the page does not take the session back", taken_back is None and alice.hook("state") == "offline",
              f"other socket closed with {taken_back}, page {alice.hook('state')}")
    except Exception:
        traceback.print_exc()
        check("the taken over scenario ran to the end", False, "exception above")
    return people


def lan_talk(server):
    """The LAN promise: a server with --tls-self-signed, two people open its https:// page (in one browser, a window
    each; the certificate warning accepted as a person would) and talk."""
    browser = Browser()
    alice = Person("alice", server.url, browser)
    people = [alice]
    try:
        bob = Person("bob", server.url, browser)
        people.append(bob)
        check("lan: the page is served over HTTPS and may use the microphone",
              server.url.startswith("https://") and alice.js("return location.protocol") == "https:"
              and alice.js("return window.isSecureContext") is True, server.url)
        if not (alice.sign_in() and bob.sign_in()):
            check("lan: both sign in over WSS", False)
            return people
        alice_id, bob_id = enter_room(alice, bob, "Kitchen", "lan: ")
        if not (alice_id and bob_id):
            return people
        ok, seen = audio_flows(bob, alice_id)
        check("lan: bob hears alice", ok, seen)
        ok, seen = audio_flows(alice, bob_id)
        check("lan: alice hears bob", ok, seen)
    except Exception:
        traceback.print_exc()
        check("the lan scenario ran to the end", False, "exception above")
    # bob's window first: alice's quit ends the browser they share.
    return people[::-1]

def main():
    for path, what in ((PARLOR_BIN, "the parlor binary (PARLOR_BIN)"), (CHROMIUM, "chromium"), (CHROMEDRIVER, "chromedriver")):
        if not os.access(path, os.X_OK):
            print(f"browser: {what} not found at {path}", file=sys.stderr)
            print("browser: 0 passed, 1 failed")
            return 1
    data_dir = tempfile.mkdtemp(prefix="parlor-browser-tls-")  # the self-signed certificate is made here
    for name, scenario, extra in (
            ("talk", talk, ()),
            ("mesh", lambda server: talk(server, "mesh: ", screenshot=False), ("--media", "mesh")),
            ("listener", listen, ("--max-audio-senders", "1")),
            ("shared link", shared_link, ()),
            ("taken over", taken_over, ()),
            ("lan", lan_talk, ("--tls-self-signed", "--data-dir", data_dir))):
        try:
            server = Server(*extra)
        except Exception as error:
            check(f"{name}: the server starts", False, str(error))
            continue
        run_scenario(name, server, scenario)
    passed = sum(1 for r in results if r[1])
    failed = len(results) - passed
    if not results:
        failed = 1
    print(f"browser: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
