#!/usr/bin/env python3
"""Smoke checks of a running Parlor (docker/check.sh): standard library only, any failure exits nonzero.

    smoke.py healthz URL             GET /healthz answers {"status":"ok"}
    smoke.py before URL STATE_FILE   POST /auth, POST /rooms, GET /rooms, a WebSocket join; keeps the token and room
    smoke.py after URL STATE_FILE    after a restart: the token from before still works, the room is still there
                                     (GET /rooms and a WebSocket join with the old token)
    smoke.py hold URL STATE_FILE READY_FILE
                                     joins the room on a WebSocket, creates READY_FILE, and waits for the server
                                     to close it with 1001 (going away) when it is stopped
"""

import base64
import hashlib
import json
import os
import socket
import struct
import sys
import urllib.error
import urllib.parse
import urllib.request

TIMEOUT = 10
WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def fail(message):
    print(f"smoke: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def request(url, method="GET", body=None, token=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers, method=method), timeout=TIMEOUT) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as error:
        fail(f"{method} {url}: {error.code} {error.read()[:300]!r}")
    except (urllib.error.URLError, OSError) as error:
        fail(f"{method} {url}: {error}")


def healthz(base):
    status, body = request(f"{base}/healthz")
    if status != 200 or body != {"status": "ok"}:
        fail(f"/healthz: {status} {body}")


class WebSocket:
    """A minimal RFC 6455 client: the handshake, masked text frames out, text frames in (pings answered)."""

    def __init__(self, base, token):
        address = urllib.parse.urlsplit(base)
        self.sock = socket.create_connection((address.hostname, address.port), timeout=TIMEOUT)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /ws HTTP/1.1\r\nHost: {address.netloc}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Authorization: Bearer {token}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                fail(f"/ws: connection closed during the handshake: {head!r}")
            head += chunk
        head, self.buffer = head.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        if not lines[0].startswith("HTTP/1.1 101"):
            fail(f"/ws: {lines[0]} {self.buffer[:300]!r}")
        accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()
        if f"sec-websocket-accept: {accept.lower()}" not in (line.lower() for line in lines):
            fail("/ws: wrong or missing Sec-WebSocket-Accept")

    def _read(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                fail("/ws: connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def _send(self, opcode, payload):
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 65536:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send(self, message):
        self._send(0x1, json.dumps(message).encode())

    def _frame(self):
        """The next frame from the server, as (opcode, payload); pings are answered on the way."""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack("!H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(length)
            opcode = first & 0x0F
            if opcode == 0x9:
                self._send(0xA, payload)
            else:
                return opcode, payload

    def receive(self):
        while True:
            opcode, payload = self._frame()
            if opcode == 0x1:
                return json.loads(payload)
            if opcode == 0x8:
                fail(f"/ws: closed by the server: {payload!r}")

    def close_code(self):
        """Reads until the server's close frame and returns its status code (None when it sent none)."""
        while True:
            opcode, payload = self._frame()
            if opcode == 0x8:
                return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None

    def reply_to(self, tid):
        while True:
            message = self.receive()
            if message.get("tid") == tid:
                return message

    def close(self):
        self._send(0x8, struct.pack("!H", 1000))
        self.sock.close()


def join(base, token, room_id, keep_open=False):
    ws = WebSocket(base, token)
    first = ws.receive()
    if first.get("type") != "session:success":
        fail(f"/ws: first message {first}")
    ws.send({"type": "conversation:join", "tid": "join-1", "body": {"cid": room_id}})
    reply = ws.reply_to("join-1")
    if reply.get("type") != "conversation:join:success" or reply["body"].get("cid") != room_id:
        fail(f"conversation:join: {reply}")
    if keep_open:
        return ws
    ws.close()
    return reply["body"]["member_id"]


def listed(base, token, room_id):
    status, rooms = request(f"{base}/rooms", token=token)
    if status != 200 or room_id not in [room.get("id") for room in rooms]:
        fail(f"GET /rooms: {status}, {room_id} not in {rooms}")


def before(base, state_file):
    healthz(base)
    status, auth = request(f"{base}/auth", "POST", {"name": "docker-check"})
    if status != 200 or not auth.get("jwt"):
        fail(f"POST /auth: {status} {auth}")
    token = auth["jwt"]
    status, room = request(f"{base}/rooms", "POST", {"display_name": "docker check"}, token)
    if status != 201 or not room.get("id"):
        fail(f"POST /rooms: {status} {room}")
    listed(base, token, room["id"])
    member = join(base, token, room["id"])
    with open(state_file, "w") as file:
        json.dump({"token": token, "room": room["id"], "member": member}, file)
    print(f"   /healthz ok; POST /auth ok; POST /rooms {room['id']}; GET /rooms lists it; "
          f"WebSocket join as {member}")


def after(base, state_file):
    with open(state_file) as file:
        state = json.load(file)
    healthz(base)
    listed(base, state["token"], state["room"])
    member = join(base, state["token"], state["room"])
    same = "the same member" if member == state["member"] else f"a new member, {member}"
    print(f"   the token from before the restart works: {state['room']} still listed; WebSocket join again as {same}")


def hold(base, state_file, ready_file):
    with open(state_file) as file:
        state = json.load(file)
    ws = join(base, state["token"], state["room"], keep_open=True)
    ws.sock.settimeout(60)
    open(ready_file, "w").close()
    code = ws.close_code()
    if code != 1001:
        fail(f"the server closed the WebSocket with {code} on shutdown, not 1001")
    print("   the open WebSocket was closed with 1001 (going away)")


if __name__ == "__main__":
    commands = {"healthz": (healthz, 1), "before": (before, 2), "after": (after, 2), "hold": (hold, 3)}
    if len(sys.argv) < 2 or sys.argv[1] not in commands or len(sys.argv) != 2 + commands[sys.argv[1]][1]:
        sys.exit(__doc__)
    command, _ = commands[sys.argv[1]]
    command(*sys.argv[2:])
