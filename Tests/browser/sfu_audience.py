#!/usr/bin/env python3
"""One speaker and an audience of six through Parlor's selective forwarding unit, in real (headless) Chromium.

Run by run.sh inside the loopback-only network namespace. alice (her own browser) creates a stage room and speaks;
six listeners (one shared browser, a window each) join its audience. Checks: every page has exactly one
RTCPeerConnection (to the server); every listener hears alice (bytes grow and the level is above 0 on its WebRTC
statistics); alice's upload does not grow with her audience (her outbound bytes per second with six listeners
within 20% of those with two: she sends one stream, the server copies it); her mute silences her at every listener
(the level drops to ~0 and the server forwards nothing); a listener who forces a microphone track into the
connection (a new offer made by hand, the server's "inactive" answer overridden) does send, and reaches nobody;
a listener who leaves closes their connection and, back in, hears alice again; every page's connection uses the SRTP
profile the server prefers (its transport's `srtpCipher`: AEAD_AES_128_GCM by default, the first of
PARLOR_SRTP_PROFILES when that forces one). Ends with `sfu: N passed, M failed`.
"""
import os
import sys
import time
import traceback

from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

import browser_support
from browser_support import Browser, Person, Server, audio_flows, check, results, run_scenario, wait_for

ROOM_NAME = "Assembly"
LISTENERS = 6
RATE_WINDOW = 4.0   # seconds over which alice's upload is measured
# The server reads PARLOR_SRTP_PROFILES too (it inherits our environment): its first profile is the one agreed.
EXPECTED_SRTP = os.environ.get("PARLOR_SRTP_PROFILES", "AEAD_AES_128_GCM").split(",")[0].strip()
# What Chromium's `srtpCipher` may say for it: the RFC name, or BoringSSL's with SRTP_ before it (Chromium 156 says the latter).
SRTP_CIPHER_NAMES = {"AEAD_AES_128_GCM": {"AEAD_AES_128_GCM", "SRTP_AEAD_AES_128_GCM"},
                     "AES_CM_128_HMAC_SHA1_80": {"AES_CM_128_HMAC_SHA1_80", "SRTP_AES128_CM_HMAC_SHA1_80"}}

# The SRTP profile of the page's connection to the server, from its transport statistics.
SRTP_CIPHER = """
return (async () => {
  const pc = window.parlor.serverConnection;
  if (!pc) return null;
  let cipher = null;
  (await pc.getStats()).forEach((entry) => { if (entry.type === 'transport' && entry.srtpCipher) cipher = entry.srtpCipher; });
  return cipher;
})();
"""

# A listener who wants to be heard anyway: its own peer connection (the page's is closed first, so the client
# does not offer again over it) with the fake microphone on mid 0, offered with the page's connection to the server;
# where the answer says mid 0 is inactive, the browser is told it said recvonly, so it sends. Returns the answer's
# direction for mid 0.
FORCE_SEND = """
return (async () => {
  const [slots] = arguments;
  window.parlor.serverConnection?.close();
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const pc = new RTCPeerConnection({ iceServers: window.parlor.iceServers });
  window.roguePc = pc;
  pc.addTransceiver(stream.getAudioTracks()[0], { direction: 'sendonly', streams: [stream] });
  for (let i = 0; i < slots; i += 1) pc.addTransceiver('audio', { direction: 'recvonly' });
  await pc.setLocalDescription(await pc.createOffer());
  const reply = await window.parlor.request('media:offer', { cid: window.parlor.roomId, sdp: pc.localDescription.sdp });
  const sections = reply.sdp.split(/(?=\\r\\nm=)/);
  const said = (sections[1].match(/a=(sendrecv|sendonly|recvonly|inactive)/) || [])[1];
  sections[1] = sections[1].replace(/a=inactive\\r\\n/, 'a=recvonly\\r\\n');
  await pc.setRemoteDescription({ type: 'answer', sdp: sections.join('') });
  return said;
})();
"""

ROGUE_SENT = """
return (async () => {
  const pc = window.roguePc;
  if (!pc) return null;
  let sent = 0;
  (await pc.getSenders()[0].getStats()).forEach((s) => { if (s.type === 'outbound-rtp') sent += s.bytesSent || 0; });
  return { state: pc.connectionState, sent };
})();
"""


def join_from_list(person):
    return browser_support.join_from_list(person, ROOM_NAME)


def outbound_rate(person):
    """alice's upload in bytes per second over RATE_WINDOW, from her outbound-rtp statistics (their timestamps)."""
    def total():
        rows = person.js("return window.parlor.outboundAudioStats()") or []
        return sum(r["bytesSent"] for r in rows), max((r["timestamp"] for r in rows), default=0), len(rows)
    first = total()
    time.sleep(RATE_WINDOW)
    last = total()
    seconds = (last[1] - first[1]) / 1000
    return ((last[0] - first[0]) / seconds if seconds > 0 else 0.0), last[2]


def inbound_rows(person):
    return person.js("return window.parlor.inboundAudioStats()") or []


def all_hear(listeners, speaker_id, timeout=25):
    """Every listener's inbound audio from speaker_id grows and shows a level above 0: (names who do not, detail)."""
    first, peak, heard = {}, {}, set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and len(heard) < len(listeners):
        for person in listeners:
            if person.name in heard:
                continue
            row = next((r for r in inbound_rows(person) if r["member_id"] == speaker_id), None)
            if not row:
                continue
            start = first.setdefault(person.name, row)
            peak[person.name] = max(peak.get(person.name, 0), row["audioLevel"])
            if row["bytesReceived"] > start["bytesReceived"] and peak[person.name] > 0:
                heard.add(person.name)
        time.sleep(0.3)
    missing = [p.name for p in listeners if p.name not in heard]
    return missing, f"peaks {', '.join(f'{n} {v:.2f}' for n, v in sorted(peak.items()))}"


def all_silent(listeners, speaker_id, timeout=15, window=2.5):
    """A window in which no listener gets bytes from speaker_id and every level stays ~0: (ok, detail)."""
    deadline = time.monotonic() + timeout
    detail = ""
    while time.monotonic() < deadline:
        start = {p.name: next((r for r in inbound_rows(p) if r["member_id"] == speaker_id), None) for p in listeners}
        peaks = {p.name: 0.0 for p in listeners}
        end = time.monotonic() + window
        while time.monotonic() < end:
            for person in listeners:
                row = next((r for r in inbound_rows(person) if r["member_id"] == speaker_id), None)
                if row:
                    peaks[person.name] = max(peaks[person.name], row["audioLevel"])
            time.sleep(0.2)
        stop = {p.name: next((r for r in inbound_rows(p) if r["member_id"] == speaker_id), None) for p in listeners}
        grown = {n: (stop[n] or {}).get("bytesReceived", 0) - (start[n] or {}).get("bytesReceived", 0) for n in stop}
        detail = f"bytes {grown}, peaks {peaks}"
        if all(g <= 0 for g in grown.values()) and all(v < 0.01 for v in peaks.values()):
            return True, detail
    return False, detail


def received_total(person, except_member=None):
    return sum(r["bytesReceived"] for r in inbound_rows(person) if r["member_id"] != except_member or except_member is None)


def audience(server):
    alice = Person("alice", server.url)
    crowd = Browser()
    listeners = []
    people = [alice]
    try:
        for index in range(LISTENERS):
            listeners.append(Person(f"listener{index + 1}", server.url, crowd))
        people += listeners[::-1]  # the browser's first window (its owner) last: its quit ends the browser
        if not (alice.sign_in() and all(p.sign_in() for p in listeners)):
            check("sfu: everyone signs in", False)
            return people
        Select(alice.find("#create-mode")).select_by_value("stage")
        alice.find("#create-name").send_keys(ROOM_NAME, Keys.ENTER)
        alice_id = wait_for("alice in the room", lambda: alice.visible("#room-view") and alice.hook("memberId"))
        check("sfu: alice creates a stage room, speaks, through the server's forwarding unit",
              alice_id and wait_for("alice sending", lambda: alice.hook("sending")) and alice.hook("mediaMode") == "sfu",
              f"media {alice.hook('mediaMode')}, sending {alice.hook('sending')}")
        if not alice_id:
            return people

        # Two listeners first: alice's upload with an audience of two.
        ids = {}
        for person in listeners[:2]:
            ids[person.name] = join_from_list(person)
        missing, seen = all_hear(listeners[:2], alice_id)
        check("sfu: the first two listeners hear alice", not missing and all(ids.values()), f"missing {missing}; {seen}")
        rate_two, streams_two = outbound_rate(alice)

        # Four more.
        for person in listeners[2:]:
            ids[person.name] = join_from_list(person)
        check("sfu: six listeners join the audience", all(ids.values()) and wait_for("seven tiles on alice's page", lambda: (
            len(alice.hook("members")) == LISTENERS + 1)), f"members on alice's page {len(alice.hook('members'))}")
        missing, seen = all_hear(listeners, alice_id)
        check("sfu: every listener hears alice (bytes grow, level > 0)", not missing, f"missing {missing}; {seen}")
        counts = {p.name: p.open_peer_connections() for p in [alice] + listeners}
        check("sfu: every page has exactly one peer connection, to the server",
              all(c == 1 for c in counts.values()), str(counts))
        ciphers = {p.name: p.js(SRTP_CIPHER) for p in [alice] + listeners}
        check(f"sfu: every connection to the server is protected with {EXPECTED_SRTP}",
              all(c in SRTP_CIPHER_NAMES.get(EXPECTED_SRTP, {EXPECTED_SRTP}) for c in ciphers.values()), str(ciphers))
        rate_six, streams_six = outbound_rate(alice)
        check("sfu: alice sends one stream whatever her audience (upload with 6 listeners within 20% of with 2)",
              rate_two > 0 and abs(rate_six - rate_two) <= 0.2 * rate_two and streams_two == streams_six == 1,
              f"{rate_two:.0f} B/s with 2, {rate_six:.0f} B/s with 6; outbound streams {streams_two}, {streams_six}")

        # Mute: every listener's audio from alice stops (the server forwards nothing), and comes back.
        alice.find("#mute").click()
        wait_for("the muted mark on a listener's page", lambda: (
            (tile := listeners[0].tile_of(alice_id)) is not None and tile.get_attribute("data-muted") == "true"),
            timeout=5)
        ok, seen = all_silent(listeners, alice_id)
        check("sfu: alice's mute silences her at every listener (no bytes forwarded, level ~0)", ok, seen)
        alice.find("#mute").click()
        missing, seen = all_hear(listeners, alice_id)
        check("sfu: after unmuting every listener hears alice again", not missing, f"missing {missing}; {seen}")

        # A listener forces a track: it leaves the browser, and reaches nobody.
        rogue = listeners[-1]
        rogue_id = ids[rogue.name]
        refused = rogue.js("""return window.parlor.request('audio:enable', { cid: window.parlor.roomId })
            .then(() => null, (error) => error.code);""")
        said = rogue.js(FORCE_SEND, len(rogue.hook("slots")))
        sending = wait_for("the forced track on the wire", lambda: (
            (first := rogue.js(ROGUE_SENT)) and first["state"] == "connected" and first["sent"] > 0
            and time.sleep(1) is None and rogue.js(ROGUE_SENT)["sent"] > first["sent"]), timeout=15)
        check("sfu: a listener is refused audio:enable, and its forced track leaves its browser anyway",
              refused == "member:error:not-allowed" and sending,
              f"audio:enable → {refused}; the answer said mid 0 {said}; {rogue.js(ROGUE_SENT)}")
        others = [alice] + listeners[:-1]
        before = {p.name: (received_total(p, alice_id if p is not alice else None)) for p in others}
        time.sleep(3)
        after = {p.name: (received_total(p, alice_id if p is not alice else None)) for p in others}
        slots_with_rogue = [p.name for p in others if rogue_id in (p.hook("slots") or {}).values()]
        check("sfu: the forced audio reaches nobody (no slot carries it, no other bytes arrive)",
              not slots_with_rogue and all(after[n] == before[n] for n in before),
              f"slots with the listener on {slots_with_rogue}; bytes other than alice's {before} → {after}")
        rogue.js("window.roguePc && window.roguePc.close()")

        # Leave and come back.
        leaver = listeners[0]
        leaver.find("#leave").click()
        check("sfu: a listener who leaves closes their connection to the server", wait_for("the lobby", lambda: (
            leaver.visible("#lobby-view") and leaver.open_peer_connections() == 0), timeout=5),
              f"open {leaver.open_peer_connections()}")
        check("sfu: alice's page drops their tile", wait_for("the tile gone", lambda: (
            len(alice.hook("members")) == LISTENERS), timeout=5))
        back = join_from_list(leaver)
        ok, seen = audio_flows(leaver, alice_id)
        check("sfu: back in the room, they hear alice again on one connection",
              back and ok and leaver.open_peer_connections() == 1, seen)
    except Exception:
        traceback.print_exc()
        check("the sfu audience scenario ran to the end", False, "exception above")
    return people


def main():
    try:
        server = Server()
    except Exception as error:
        check("sfu: the server starts", False, str(error))
        server = None
    if server:
        run_scenario("sfu", server, audience)
    passed = sum(1 for r in results if r[1])
    failed = len(results) - passed if results else 1
    print(f"sfu: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    start = time.monotonic()
    status = main()
    print(f"sfu: {time.monotonic() - start:.0f} s", flush=True)
    sys.exit(status)
