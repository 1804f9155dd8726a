#!/usr/bin/env python3
"""What the browser test scripts share: the server they start (Server), headless Chromium (Browser) and the people
in it (Person, alone in a browser or a window each in a shared one), checks and waits, the audio samplers that read
a page's WebRTC statistics, entering a room, and run_scenario. Not a test by itself.
"""
import array
import itertools
import math
import os
import subprocess
import tempfile
import threading
import time
import sys
import wave

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARLOR_BIN = os.environ.get("PARLOR_BIN", os.path.join(REPO, ".build/debug/parlor"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")

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
    def __init__(self, *extra, database=":memory:"):
        self.log = tempfile.NamedTemporaryFile(prefix="parlor-browser-", suffix=".log", delete=False)
        self.process = subprocess.Popen(
            [PARLOR_BIN, "serve", "--host", "127.0.0.1", "--port", "0", "--database", database, *extra],
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


# Each browser's fake microphone plays its own voice-like sound. Chromium's default fake microphone beeps the same
# short pattern in every browser, and the page's audio processing (echo cancellation, noise suppression, gain
# control: the web client asks for all three) let those beeps arrive anywhere from nearly silent to full scale (peak
# levels 0.09 to 1.0 between runs; alike with the processing off, but then too short to count as speech): now and
# then the forwarding unit never saw the 100 ms of voice that lights a speaking ring. Each browser's sound is built
# on its own pitch, so two people's sounds do not correlate (an echo canceller hears the other one played out); it
# changes note every 200 ms and swells at a syllable's rate, so noise suppression does not take it for a steady
# noise; and it lasts 1.6 s of every 2 s, which the server's detector counts as speech.
PITCHES_HZ = itertools.cycle([220, 294, 247, 330, 262, 349, 196, 392])
MELODY = [1.0, 1.25, 1.5, 1.125, 1.333, 1.0, 1.2, 1.5]  # one note per 200 ms of the 1.6 s voiced part


def fake_microphone_file(pitch, rate=48_000, seconds=2.0, voiced_seconds=1.6, amplitude=0.25):
    """A WAV file (removed by Browser.quit) that Chromium loops as the microphone: notes on `pitch`, 200 ms each,
    their loudness swinging between 60 and 100 % of `amplitude` (about -12 dBFS) five times a second, then silence."""
    note = int(rate * 0.2)
    voiced = int(rate * voiced_seconds)
    fade = int(rate * 0.01)
    samples = array.array("h", bytes(2 * int(rate * seconds)))
    phase = 0.0
    for i in range(voiced):
        frequency = pitch * MELODY[(i // note) % len(MELODY)]
        phase += 2 * math.pi * frequency / rate  # continuous across notes: no clicks
        swell = 0.8 + 0.2 * math.sin(2 * math.pi * 5 * i / rate)
        envelope = min(1.0, i / fade, (voiced - 1 - i) / fade)
        samples[i] = int(32767 * amplitude * swell * envelope * math.sin(phase))
    handle, path = tempfile.mkstemp(prefix="parlor-microphone-", suffix=".wav")
    with os.fdopen(handle, "wb") as file, wave.open(file, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return path


class Browser:
    """One headless Chromium (and its chromedriver). People can share it, one window each (Person(browser=…))."""

    def __init__(self):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        self.pitch = next(PITCHES_HZ)  # the microphone's base pitch, for tests that look for it in the spectrum
        self.microphone = fake_microphone_file(self.pitch)
        options.add_argument(f"--use-file-for-fake-audio-capture={self.microphone}")
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
        try:
            os.remove(self.microphone)
        except OSError:
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

    def made_peer_connections(self):
        """How many RTCPeerConnections the page has made, closed ones included."""
        return self.js("return window.peerConnections.length")

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

# ---------- Scenarios ----------

def click_join(person, room_name, timeout=15):
    """Clicks room_name's Join button in person's lobby list; the button, or None at the deadline."""
    # Found and clicked in one try: the list may be drawn again (a member count changed) between finding the button
    # and clicking it, and the stale button's exception makes wait_for find it again.
    def attempt():
        join = person.visible(f'#room-list button[aria-label="Join {room_name}"]')
        if join:
            join.click()
        return join
    return wait_for(f"the room in {person.name}'s list", attempt, timeout=timeout)


def join_from_list(person, room_name, ready="memberId"):
    """person joins room_name from their lobby's list; returns their member id once the hook `ready` is truthy too."""
    click_join(person, room_name)
    return wait_for(f"{person.name} in the room",
                    lambda: person.visible("#room-view") and person.hook(ready) and person.hook("memberId"))


def enter_room(alice, bob, room_name, prefix=""):
    """alice creates a room (which joins her); bob finds it in his live-refreshing list and joins: their ids."""
    alice.find("#create-name").send_keys(room_name, Keys.ENTER)
    alice_id = wait_for("alice in the room", lambda: alice.visible("#room-view") and alice.hook("memberId"))
    check(f"{prefix}alice creates and joins a room", alice_id, alice_id or "")
    click_join(bob, room_name)
    bob_id = wait_for("bob in the room", lambda: bob.visible("#room-view") and bob.hook("memberId"))
    check(f"{prefix}bob joins the room from the list", bob_id, bob_id or "")
    return alice_id, bob_id

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


def run_script(name, scenario, *server_flags):
    """A script with one scenario on one fresh server: runs it, prints `NAME: N passed, M failed` and the time, and
    exits with 0 only if every check passed."""
    start = time.monotonic()
    try:
        server = Server(*server_flags)
    except Exception as error:
        check(f"{name}: the server starts", False, str(error))
        server = None
    if server:
        run_scenario(name, server, scenario)
    passed = sum(1 for r in results if r[1])
    failed = len(results) - passed if results else 1
    print(f"{name}: {passed} passed, {failed} failed", flush=True)
    print(f"{name}: {time.monotonic() - start:.0f} s", flush=True)
    sys.exit(0 if failed == 0 else 1)
