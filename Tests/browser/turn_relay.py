#!/usr/bin/env python3
"""Audio through a real TURN server (coturn) with Parlor's time-limited credentials.

Run by run.sh inside the loopback-only network namespace, after two_users_talk.py. It starts coturn (TURNSERVER)
on 127.0.0.1 with the REST-API shared secret (use-auth-secret), and checks with a small STUN/TURN client that coturn
really checks that secret: an Allocate signed with a credential computed here is accepted, one with a wrong
credential or an expired username is refused with 401. Then it starts Parlor with --turn-secret/--turn-urls, and two
headless Chromium users forced to relay (localStorage parlor.iceTransportPolicy = relay) talk through the server's
forwarding unit: audio flows both ways, each browser's selected candidate pair is relay on its end (the server's
host candidate on the other), and after a dropped socket the resumed session's fresh
credentials are in the peer connection's configuration and audio still flows. Ends with `turn: N passed, M failed`.
"""
import base64
import hashlib
import hmac
import os
import secrets
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback

import browser_support as base
from browser_support import Person, Server, check, wait_for, audio_flows, enter_room, results, stop_child

TURNSERVER = os.environ.get("TURNSERVER", "/usr/bin/turnserver")
REALM = "parlor"
TTL = 600


# ---------- A minimal STUN/TURN client (RFC 5389 / 5766), enough for Binding and Allocate ----------

MAGIC = 0x2112A442
BINDING, ALLOCATE = 0x0001, 0x0003
ATTR_USERNAME, ATTR_MESSAGE_INTEGRITY, ATTR_ERROR_CODE = 0x0006, 0x0008, 0x0009
ATTR_REALM, ATTR_NONCE, ATTR_REQUESTED_TRANSPORT = 0x0014, 0x0015, 0x0019


def attribute(kind, value):
    return struct.pack("!HH", kind, len(value)) + value + b"\0" * (-len(value) % 4)


def message(kind, transaction, attributes, key=None):
    body = b"".join(attributes)
    if key is not None:  # MESSAGE-INTEGRITY covers the header with the length already counting itself (24 bytes)
        head = struct.pack("!HHI", kind, len(body) + 24, MAGIC) + transaction
        body += attribute(ATTR_MESSAGE_INTEGRITY, hmac.new(key, head + body, hashlib.sha1).digest())
    return struct.pack("!HHI", kind, len(body), MAGIC) + transaction + body


def parse(data):
    kind, length, _ = struct.unpack("!HHI", data[:8])
    attributes, offset = {}, 20
    while offset + 4 <= 20 + length:
        attr, size = struct.unpack("!HH", data[offset:offset + 4])
        attributes.setdefault(attr, data[offset + 4:offset + 4 + size])
        offset += 4 + size + (-size % 4)
    return kind, data[8:20], attributes


def error_code(attributes):
    value = attributes.get(ATTR_ERROR_CODE)
    return value[2] * 100 + value[3] if value else None


def exchange(sock, port, kind, attributes, key=None):
    """One request over UDP to 127.0.0.1:port; returns (response type, attributes), or None on no answer."""
    transaction = secrets.token_bytes(12)
    sock.sendto(message(kind, transaction, attributes, key), ("127.0.0.1", port))
    try:
        while True:
            data, _ = sock.recvfrom(2048)
            reply_kind, reply_transaction, reply_attributes = parse(data)
            if reply_transaction == transaction:
                return reply_kind, reply_attributes
    except socket.timeout:
        return None


def udp_socket(timeout=1.0):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(timeout)
    return sock


def binding(port):
    with udp_socket(0.3) as sock:
        return exchange(sock, port, BINDING, [])


def allocate(port, username, password):
    """A TURN Allocate with the long-term credential: 'success', or the error code of the refusal. Both requests
    go from one socket: coturn ties its nonce to the client's address and port."""
    transport = attribute(ATTR_REQUESTED_TRANSPORT, bytes([17, 0, 0, 0]))
    with udp_socket() as sock:
        first = exchange(sock, port, ALLOCATE, [transport])
        if not first or error_code(first[1]) != 401:
            return f"no 401 challenge: {first}"
        realm, nonce = first[1][ATTR_REALM], first[1][ATTR_NONCE]
        key = hashlib.md5(f"{username}:{realm.decode()}:{password}".encode()).digest()
        reply = exchange(sock, port, ALLOCATE, [transport, attribute(ATTR_USERNAME, username.encode()),
                                                attribute(ATTR_REALM, realm), attribute(ATTR_NONCE, nonce)], key)
    if not reply:
        return "no answer"
    return "success" if reply[0] == 0x0103 else error_code(reply[1])


def turn_credential(secret, username):
    """coturn's REST-API password, computed here independently of Parlor."""
    return base64.b64encode(hmac.new(secret.encode(), username.encode(), hashlib.sha1).digest()).decode()


# ---------- coturn ----------

def free_port():
    """A port free for both UDP and TCP on 127.0.0.1 (coturn listens on both)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            port = udp.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
                try:
                    tcp.bind(("127.0.0.1", port))
                    return port
                except OSError:
                    continue
    raise RuntimeError("no free port")


class TURNServer:
    def __init__(self, secret):
        self.directory = tempfile.mkdtemp(prefix="parlor-coturn-")
        self.port = free_port()
        self.log = open(os.path.join(self.directory, "turnserver.log"), "w+")
        # -n: no configuration file; only loopback, UDP and TCP without TLS, a private database file, no CLI. As root it
        # keeps root (no --proc-user), which is fine inside the test namespace.
        self.process = subprocess.Popen(
            [TURNSERVER, "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", f"--listening-port={self.port}",
             "--use-auth-secret", f"--static-auth-secret={secret}", f"--realm={REALM}", "--allow-loopback-peers",
             "--no-cli", "--no-tls", "--no-dtls", "--fingerprint", "--simple-log", "--log-file=stdout",
             f"--pidfile={self.directory}/turnserver.pid", f"--userdb={self.directory}/turndb",
             "--min-port=49152", "--max-port=49999"],
            stdout=self.log, stderr=subprocess.STDOUT)
        ready = wait_for("coturn to answer a STUN Binding request",
                         lambda: self.process.poll() is None and binding(self.port), timeout=15)
        if not ready:
            self.stop()
            raise RuntimeError(f"coturn did not start; log:\n{self.log_tail()}")

    def stop(self):
        stop_child(self.process)

    def log_text(self):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def log_tail(self, lines=40):
        return "".join(self.log_text().splitlines(True)[-lines:])


# ---------- The scenario ----------

SELECTED_PAIR = """
return (async () => {
const pc = window.parlor.peers[arguments[0]];
if (!pc) return null;
const stats = await pc.getStats();
let pair = null;
stats.forEach((s) => { if (s.type === 'transport' && s.selectedCandidatePairId) pair = stats.get(s.selectedCandidatePairId); });
if (!pair) stats.forEach((s) => { if (s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded') pair = s; });
if (!pair) return null;
const local = stats.get(pair.localCandidateId), remote = stats.get(pair.remoteCandidateId);
return { local: local && local.candidateType, remote: remote && remote.candidateType,
         relayProtocol: local && local.relayProtocol, url: local && local.url };
})();
"""


def relay_person(name, url):
    person = Person(name, url)
    person.js("localStorage.setItem('parlor.iceTransportPolicy', 'relay')")
    person.driver.refresh()  # rtc.js reads the policy when it loads (sfu.js takes it from there)
    return person


def turn_entry(person):
    servers = person.hook("iceServers") or []
    return next((s for s in servers if any(u.startswith("turn:") for u in s.get("urls", []))), None)


def pc_turn_username(person, member_id):
    return person.js("""const pc = window.parlor.peers[arguments[0]];
        const servers = pc ? pc.getConfiguration().iceServers : [];
        const turn = servers.find((s) => [].concat(s.urls).some((u) => u.startsWith('turn:')));
        return turn ? turn.username : null;""", member_id)


def relayed(person, other_id, prefix):
    """The mesh: relay on both ends (each browser goes through coturn). The forwarding unit: our end is relay, the
    other is the server's host candidate (coturn relays to Parlor's media port)."""
    pair = wait_for(f"{person.name}'s selected candidate pair",
                    lambda: person.js(SELECTED_PAIR, other_id), timeout=15)
    remote = "host" if person.hook("mediaMode") == "sfu" else "relay"
    return check(f"{prefix}{person.name}'s selected candidate pair is relay on its end ({remote} on the other)",
                 pair and pair.get("local") == "relay" and pair.get("remote") == remote, str(pair))


def talk_through_turn(server, turn, secret):
    alice = relay_person("alice", server.url)
    people = [alice]
    try:
        bob = relay_person("bob", server.url)
        people.append(bob)
        if not (alice.sign_in() and bob.sign_in()):
            check("turn: both sign in", False)
            return people
        entry = turn_entry(alice)
        username = (entry or {}).get("username", "")
        expiry, _, user_id = username.partition(":")
        check("turn: session:success hands out a TURN entry <expiry>:<user id> valid for --turn-ttl",
              entry and entry.get("urls") == [f"turn:127.0.0.1:{turn.port}"] and expiry.isdigit()
              and abs(int(expiry) - (time.time() + TTL)) < 30 and user_id.startswith("USR-")
              and entry.get("credential") == turn_credential(secret, username), str(entry))
        check("turn: coturn accepts the credential Parlor handed out",
              allocate(turn.port, username, entry.get("credential", "") if entry else "") == "success")

        alice_id, bob_id = enter_room(alice, bob, "Relayed", "turn: ")
        if not (alice_id and bob_id):
            return people
        connected = wait_for("relayed peer connections", lambda: (
            alice.js("return window.parlor.peers[arguments[0]]?.connectionState", bob_id) == "connected"
            and bob.js("return window.parlor.peers[arguments[0]]?.connectionState", alice_id) == "connected"),
            timeout=25)
        check("turn: the peer connection is up on both sides, relay only", connected)
        relayed(alice, bob_id, "turn: ")
        relayed(bob, alice_id, "turn: ")
        ok, seen = audio_flows(bob, alice_id)
        check("turn: bob hears alice through coturn (bytes grow, level > 0)", ok, seen)
        ok, seen = audio_flows(alice, bob_id)
        check("turn: alice hears bob through coturn (bytes grow, level > 0)", ok, seen)
        # Resume: the fresh credentials of session:resume reach the existing peer connection's configuration.
        before = username
        wait_for("a new second, so a fresh credential differs", lambda: int(time.time()) + TTL > int(expiry), timeout=3,
                 interval=0.05)
        resumes = alice.hook("resumes")
        alice.js("window.parlor.dropConnection()")
        resumed = wait_for("alice to resume", lambda: alice.hook("resumes") > resumes, timeout=20)
        fresh = (turn_entry(alice) or {}).get("username")
        in_pc = pc_turn_username(alice, bob_id)
        check("turn: after a resume the peer connection holds the fresh TURN credential",
              resumed and fresh and fresh != before and in_pc == fresh,
              f"before {before}, session {fresh}, peer connection {in_pc}")
        ok, seen = audio_flows(bob, alice_id)
        check("turn: audio still flows through coturn after the resume", ok, seen)
    except Exception:
        traceback.print_exc()
        check("the turn scenario ran to the end", False, "exception above")
    return people


def refuses_bad_credentials(turn, secret):
    """coturn must check the shared secret: a positive control, then a wrong key and an expired username."""
    now = int(time.time())
    good = f"{now + TTL}:USR-probe"
    check("turn: coturn accepts a credential signed with the shared secret",
          allocate(turn.port, good, turn_credential(secret, good)) == "success")
    wrong = allocate(turn.port, good, turn_credential(secret + "-not", good))
    check("turn: coturn refuses a credential signed with another secret (401)", wrong == 401, str(wrong))
    expired = f"{now - 60}:USR-probe"
    stale = allocate(turn.port, expired, turn_credential(secret, expired))
    check("turn: coturn refuses an expired username even when correctly signed (401)", stale == 401, str(stale))


def main():
    for path, what in ((base.PARLOR_BIN, "the parlor binary (PARLOR_BIN)"), (base.CHROMIUM, "chromium"),
                       (base.CHROMEDRIVER, "chromedriver"), (TURNSERVER, "turnserver (Debian coturn)")):
        if not os.access(path, os.X_OK):
            print(f"turn: {what} not found at {path}", file=sys.stderr)
            print("turn: 0 passed, 1 failed")
            return 1
    secret = secrets.token_hex(24)
    turn = server = None
    people = []
    try:
        turn = TURNServer(secret)
        print(f"--- coturn on 127.0.0.1:{turn.port}", flush=True)
        refuses_bad_credentials(turn, secret)
        server = Server("--turn-secret", secret, "--turn-urls", f"turn:127.0.0.1:{turn.port}", "--turn-ttl", str(TTL))
        print(f"--- server at {server.url}", flush=True)
        people = talk_through_turn(server, turn, secret)
    except Exception as error:
        traceback.print_exc()
        check("turn: coturn and the server start", False, str(error))
    finally:
        for person in people:
            errors = person.console_errors()
            check(f"turn: no errors in {person.name}'s browser console", not errors, "; ".join(errors)[:600])
            person.quit()
        failed_any = any(not r[1] for r in results)
        if server:
            server.stop()
            if failed_any:
                print("--- server log (last lines) ---\n" + server.log_tail(), file=sys.stderr)
        if turn:
            turn.stop()
            if failed_any:
                print("--- coturn log (last lines) ---\n" + turn.log_tail(), file=sys.stderr)
    passed = sum(1 for r in results if r[1])
    failed = len(results) - passed if results else 1
    print(f"turn: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
