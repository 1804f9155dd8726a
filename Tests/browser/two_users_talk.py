#!/usr/bin/env python3
"""Two people talk through Parlor's built-in web client, in real (headless) Chromium browsers.

Run by run.sh inside a network namespace that has only `lo`, so WebRTC stays on loopback. It starts the server
(PARLOR_BIN) on a free port with an in-memory database, signs in alice and bob, has alice create a room that both
join, and checks what a person would: each sees the other, audio flows both ways (Chromium's fake microphone
beeps), mute shows on the other side and silences the audio, a dropped socket resumes, and leaving removes the
tile. The talk runs twice: through the server's forwarding unit (the default, one peer connection per page) and
through the browser mesh (`--media mesh`). Saves docs/screenshot-room.png. A server that lets one member send
checks a listener (receive only); another checks that a shared room link asks before joining and turning the
microphone on; the last serves HTTPS with --tls-self-signed, as on a LAN, and two people open it and talk.
Ends with `browser: N passed, M failed`. The shared pieces (Server, Person, the audio samplers, run_scenario) are
imported by the other scripts.
"""
import os
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARLOR_BIN = os.environ.get("PARLOR_BIN", os.path.join(REPO, ".build/debug/parlor"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
SCREENSHOT = os.environ.get("PARLOR_SCREENSHOT", os.path.join(REPO, "docs/screenshot-room.png"))
ROOM_NAME = "Friday chat"

results = []  # (name, ok, detail)


def check(name, ok, detail=""):
    results.append((name, bool(ok), detail))
    print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  ({detail})" if detail else ""), flush=True)
    return bool(ok)


def wait_for(what, condition, timeout=15.0, interval=0.2):
    """Polls condition() until it returns something truthy; returns it, or None at the deadline."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception as error:  # a page still loading, a stale element: try again
            last_error = error
        time.sleep(interval)
    print(f"  timed out after {timeout:.0f}s waiting for {what}" + (f": {last_error}" if last_error else ""), flush=True)
    return None


# ---------- The server ----------

def stop_child(process):
    """Stops a child this script started, by its PID: SIGTERM, then SIGKILL if it does not exit within 10 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


class Server:
    def __init__(self, *extra):
        self.log = tempfile.NamedTemporaryFile(prefix="parlor-browser-", suffix=".log", delete=False)
        self.process = subprocess.Popen(
            [PARLOR_BIN, "serve", "--host", "127.0.0.1", "--port", "0", "--database", ":memory:", *extra],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        first = {}
        reader = threading.Thread(target=lambda: first.setdefault("line", self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(20)
        line = first.get("line", "")
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"server did not print its listening line (got {line!r}); log: {self.log.name}")
        self.url = line.split("listening on ", 1)[1].split()[0]
        # Keep draining stdout so the server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()

    def stop(self):
        stop_child(self.process)

    def log_tail(self, lines=40):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-lines:])


# ---------- A browser user ----------

CHROMIUM_FLAGS = (
    "--headless=new", "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
    "--allow-loopback-in-peer-connection", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--window-size=1000,700", "--lang=en-US",
    # Several people can share one browser, each in a window: none of them may be throttled as a background page.
    "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    # The LAN scenario's self-signed certificate, accepted as a person accepts the warning once.
    "--ignore-certificate-errors")

# Run in every page before its scripts: counts microphone requests (window.microphoneRequests), and keeps every
# RTCPeerConnection the page makes (window.peerConnections) so a test can count the open ones.
PAGE_SETUP = """
window.microphoneRequests = 0;
if (navigator.mediaDevices && navigator.mediaDevices.getUserMedia) {
  const getUserMedia = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  navigator.mediaDevices.getUserMedia = (constraints) => { window.microphoneRequests += 1; return getUserMedia(constraints); };
}
window.peerConnections = [];
if (window.RTCPeerConnection) {
  const Native = window.RTCPeerConnection;
  window.RTCPeerConnection = class extends Native {
    constructor(...args) { super(...args); window.peerConnections.push(this); }
  };
}"""


class Browser:
    """One headless Chromium (and its chromedriver). People can share it, one window each (Person(browser=…))."""

    def __init__(self):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.current = self.driver.current_window_handle
        self.fresh = True  # its first window is not used yet

    def window(self):
        """A window for one more person: the first one, then new ones."""
        if self.fresh:
            self.fresh = False
        else:
            self.driver.switch_to.new_window("window")
        self.current = self.driver.current_window_handle
        return self.current

    def quit(self):
        try:
            self.driver.quit()  # ends chromedriver and the browser it started
        except Exception:
            pass


class Person:
    def __init__(self, name, base_url, browser=None):
        self.name = name
        self.owns_browser = browser is None
        self.browser = browser or Browser()
        self.handle = self.browser.window()
        # A 1000×700 page (the window size includes no browser frame in headless mode, but be exact).
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 1000, "height": 700, "deviceScaleFactor": 1, "mobile": False})
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PAGE_SETUP})
        self.driver.get(base_url)

    @property
    def driver(self):
        """The browser's driver, switched to this person's window."""
        if self.browser.current != self.handle:
            self.browser.driver.switch_to.window(self.handle)
            self.browser.current = self.handle
        return self.browser.driver

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def hook(self, expression):
        return self.js(f"return window.parlor ? window.parlor.{expression} : undefined")

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def visible(self, css):
        elements = self.driver.find_elements(By.CSS_SELECTOR, css)
        return elements[0] if elements and elements[0].is_displayed() else None

    def sign_in(self):
        field = wait_for(f"{self.name}'s name field", lambda: self.visible("#login-name"))
        field.send_keys(self.name, Keys.ENTER)
        return wait_for(f"{self.name}'s lobby", lambda: self.visible("#lobby-view")) and \
            wait_for(f"{self.name} connected", lambda: self.hook("state") == "connected")

    def tile_names(self):
        return [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "#tiles .tile .tile-name")]

    def tile_of(self, member_id):
        tiles = self.driver.find_elements(By.CSS_SELECTOR, f'#tiles .tile[data-member-id="{member_id}"]')
        return tiles[0] if tiles else None

    def inbound(self, member_id):
        rows = self.js("return window.parlor.inboundAudioStats()") or []
        return next((r for r in rows if r["member_id"] == member_id), None)

    def console_errors(self):
        try:
            return [e["message"] for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]
        except Exception:
            return []

    def open_peer_connections(self):
        return self.js("return window.peerConnections.filter((pc) => pc.connectionState !== 'closed').length")

    def quit(self):
        """Ends the browser if this person started it, else closes this person's window."""
        if self.owns_browser:
            self.browser.quit()
            return
        try:
            self.driver.close()
        except Exception:
            pass
        self.browser.current = None


def sample_levels(person, member_id, seconds, interval=0.1):
    """Samples inbound audio from member_id: (max audioLevel, bytesReceived growth, energy growth, samples with a
    row). Through the forwarding unit a member the server forwards nothing from may have no row at all."""
    first = last = None
    peak = 0.0
    count = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        row = person.inbound(member_id)
        if row:
            first = first or row
            last = row
            peak = max(peak, row.get("audioLevel") or 0)
            count += 1
        time.sleep(interval)
    if not first:
        return 0.0, 0, 0.0, 0
    return (peak, last["bytesReceived"] - first["bytesReceived"],
            (last.get("totalAudioEnergy") or 0) - (first.get("totalAudioEnergy") or 0), count)


def audio_flows(listener, speaker_id, timeout=20):
    """Within timeout: bytes grow between reads and the level is above zero at some sample."""
    deadline = time.monotonic() + timeout
    seen = "no inbound-rtp audio yet"
    while time.monotonic() < deadline:
        peak, grown, energy, count = sample_levels(listener, speaker_id, 2.0)
        seen = f"peak audioLevel {peak:.3f}, +{grown} bytes, energy +{energy:.4f} over {count} samples"
        if count >= 2 and grown > 0 and peak > 0:
            return True, seen
    return False, seen


def silent(listener, speaker_id, timeout=10):
    """Within timeout: a 3 s window where the level stays ~0. With the mesh the muted side still sends (silence),
    so its row is there; through the forwarding unit the server forwards nothing, so there may be no row."""
    deadline = time.monotonic() + timeout
    seen = ""
    sfu = listener.hook("mediaMode") == "sfu"
    while time.monotonic() < deadline:
        peak, grown, energy, count = sample_levels(listener, speaker_id, 3.0)
        seen = f"peak audioLevel {peak:.4f}, +{grown} bytes, energy +{energy:.6f} over {count} samples"
        if (count >= 5 or (sfu and grown == 0)) and peak < 0.01:
            return True, seen
    return False, seen


# ---------- The scenarios ----------

def enter_room(alice, bob, room_name, prefix=""):
    """alice creates a room (which joins her); bob finds it in his live-refreshing list and joins: their ids."""
    alice.find("#create-name").send_keys(room_name, Keys.ENTER)
    alice_id = wait_for("alice in the room", lambda: alice.visible("#room-view") and alice.hook("memberId"))
    check(f"{prefix}alice creates and joins a room", alice_id, alice_id or "")
    join = wait_for("the room in bob's list",
                    lambda: bob.visible(f'#room-list button[aria-label="Join {room_name}"]'), timeout=15)
    if join:
        join.click()
    bob_id = wait_for("bob in the room", lambda: bob.visible("#room-view") and bob.hook("memberId"))
    check(f"{prefix}bob joins the room from the list", bob_id, bob_id or "")
    return alice_id, bob_id


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

        # Speaking: bob's beeps light his ring on alice's page (audio:speaking:on relayed by the server).
        check(f"{prefix}alice sees bob's speaking ring", wait_for("bob's ring on alice's page", lambda: (
            (tile := alice.tile_of(bob_id)) is not None and "speaking" in tile.get_attribute("class")),
            timeout=10, interval=0.05))

        # The picture for the docs: alice's room with two people, taken while the beeps light the speaking ring.
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
            check(f"{prefix}after the resume alice's page offers again, still one peer connection",
                  wait_for("a new offer answered", lambda: alice.hook("offers") > offers)
                  and alice.open_peer_connections() == 1,
                  f"offers {offers} → {alice.hook('offers')}, {alice.open_peer_connections()} open")
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


def run_scenario(name, server, scenario):
    """Runs scenario(server), which returns the people it opened; then checks their consoles, closes them, stops
    the server, and prints the server's last log lines if this scenario added a failure."""
    print(f"--- {name}: server at {server.url}", flush=True)
    failures = sum(1 for r in results if not r[1])
    people = []
    try:
        people = scenario(server)
    finally:
        for person in people:
            errors = person.console_errors()
            check(f"{name}: no errors in {person.name}'s browser console", not errors, "; ".join(errors)[:600])
            person.quit()
        server.stop()
        if sum(1 for r in results if not r[1]) > failures:
            print("--- server log (last lines) ---\n" + server.log_tail(), file=sys.stderr)


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
