#!/usr/bin/env python3
"""Interop test: the tutorial's flow, driven by an independent WebSocket client.

Parlor's own tests talk to the server through Parlor's own codec, so a bug shared by the encoder and the decoder
would go unnoticed there. This script uses the Python `websockets` library (plus urllib for HTTP) instead.

It starts the server itself:

    $PARLOR_BIN serve --host 127.0.0.1 --port 0 --database :memory:

(PARLOR_BIN defaults to <repo>/.build/debug/parlor), reads the "listening on http://127.0.0.1:PORT" line, runs
the steps below, stops the server with SIGTERM and prints `interop: N passed, N failed[, N skipped]`.
It exits nonzero if any step failed. Every wait is bounded.
"""

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARLOR_BIN = os.environ.get("PARLOR_BIN", os.path.join(REPO, ".build", "debug", "parlor"))
RECEIVE_TIMEOUT = 5.0     # seconds for any one expected message
START_TIMEOUT = 30.0      # seconds for the server to print its listening line
STOP_TIMEOUT = 15.0       # seconds for the server to exit after SIGTERM
HTTP_TIMEOUT = 5.0

# No proxies from the environment: the server is on loopback.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


# ---------------------------------------------------------------- server


class Server:
    def __init__(self):
        self.stderr = tempfile.TemporaryFile()
        self.process = None
        self.base = None

    def start(self):
        expect(os.access(PARLOR_BIN, os.X_OK), f"{PARLOR_BIN} is not an executable; build first or set PARLOR_BIN")
        self.process = subprocess.Popen(
            [PARLOR_BIN, "serve", "--host", "127.0.0.1", "--port", "0", "--database", ":memory:"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr)
        line = self._read_first_line(START_TIMEOUT)
        prefix = "listening on "
        expect(line.startswith(prefix + "http://127.0.0.1:"), f"unexpected first stdout line {line!r}")
        self.base = line[len(prefix):]
        return self.base

    def _read_first_line(self, timeout):
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        data = b""
        while b"\n" not in data:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CheckFailed(f"no listening line within {timeout:.0f} s (got {data!r})")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                raise CheckFailed(f"server exited before listening (exit {self.process.wait(5)}, stdout {data!r})")
            data += chunk
        return data.split(b"\n", 1)[0].decode("utf-8", "replace").strip()

    def stop(self):
        """SIGTERM by PID; returns the exit status (SIGKILL and None if it does not stop in time)."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(5)
            return None

    def log_tail(self, lines=40):
        self.stderr.seek(0)
        text = self.stderr.read().decode("utf-8", "replace").splitlines()
        return "\n".join(text[-lines:])


# ---------------------------------------------------------------- HTTP and WebSocket helpers


def http(method, base, path, body=None, token=None):
    """Returns (status, headers, parsed JSON body or None)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with HTTP.open(request, timeout=HTTP_TIMEOUT) as response:
            status, headers, raw = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, headers, raw = error.code, error.headers, error.read()
    payload = json.loads(raw) if raw else None
    return status, headers, payload


def ws_connect(base, token):
    url = base.replace("http://", "ws://", 1) + "/ws?token=" + token
    # max_size: replies are small, but allow room; proxy=None: loopback only.
    return connect(url, open_timeout=RECEIVE_TIMEOUT, close_timeout=RECEIVE_TIMEOUT, proxy=None, max_size=1 << 20)


def receive(ws, what, predicate=lambda message: True, timeout=RECEIVE_TIMEOUT):
    """The next JSON message satisfying `predicate`, skipping others; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    skipped = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CheckFailed(f"no {what} within {timeout:.0f} s; skipped {[m.get('type') for m in skipped]}")
        try:
            raw = ws.recv(timeout=remaining)
        except TimeoutError:
            continue
        except ConnectionClosed as closed:
            raise CheckFailed(f"connection closed while waiting for {what}: {closed}")
        expect(isinstance(raw, str), f"expected a text message while waiting for {what}, got {type(raw).__name__}")
        message = json.loads(raw)
        if predicate(message):
            return message
        skipped.append(message)


def request(ws, type_, tid, body, what=None):
    """Sends a request and returns its reply (success or error) with the same tid."""
    ws.send(json.dumps({"type": type_, "tid": tid, "body": body}))
    return receive(ws, what or f"reply to {type_}", lambda m: m.get("tid") == tid and m.get("type") in (type_ + ":success", "error"))


def expect_success(reply, type_):
    expect(reply.get("type") == type_ + ":success", f"expected {type_}:success, got {json.dumps(reply)[:300]}")
    return reply.get("body") or {}


def is_event(type_, cid, member_id=None):
    def match(message):
        body = message.get("body") or {}
        return (message.get("type") == type_ and message.get("cid") == cid
                and (member_id is None or body.get("member_id") == member_id))
    return match


def check_event_shape(event, type_, cid, member_id, name):
    for key in ("type", "cid", "id", "from", "timestamp", "body"):
        expect(key in event, f"{type_} lacks {key}: {event}")
    body = event["body"]
    expect(event["type"] == type_ and event["cid"] == cid, f"wrong event {event}")
    expect(body.get("member_id") == member_id and event["from"] == member_id, f"{type_} names the wrong member: {event}")
    expect((body.get("user") or {}).get("name") == name and (body.get("user") or {}).get("id"),
           f"{type_} user should be {name}: {event}")
    expect(isinstance(event["id"], int) and event["id"] > 0, f"{type_} id should be a positive integer: {event}")


def padded_ping(tid, total_bytes):
    """A session:ping whose JSON text is exactly `total_bytes` long (ASCII)."""
    skeleton = json.dumps({"type": "session:ping", "tid": tid, "body": {"pad": ""}})
    pad = "x" * (total_bytes - len(skeleton))
    text = json.dumps({"type": "session:ping", "tid": tid, "body": {"pad": pad}})
    assert len(text) == total_bytes
    return text


def fragments(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)]


# ---------------------------------------------------------------- the flow


def main():
    server = Server()
    state = {}
    sockets = []
    steps = []

    def step(name):
        def register(function):
            steps.append((name, function))
            return function
        return register

    @step("server starts and prints its listening line")
    def _():
        state["base"] = server.start()

    @step("GET /healthz answers ok")
    def _():
        status, _, body = http("GET", state["base"], "/healthz")
        expect(status == 200 and body == {"status": "ok"}, f"healthz: {status} {body}")

    @step("POST /auth for alice and bob")
    def _():
        for name in ("alice", "bob"):
            status, _, body = http("POST", state["base"], "/auth", {"name": name})
            expect(status == 200, f"/auth {name}: {status} {body}")
            expect(body.get("name") == name and isinstance(body.get("jwt"), str) and body["jwt"].count(".") == 2,
                   f"/auth {name} body: {body}")
            state[name + "_jwt"] = body["jwt"]
            state[name + "_id"] = body.get("user_id")

    @step("POST /rooms creates the room; GET /rooms and GET /rooms/{id} show it")
    def _():
        base, token = state["base"], state["alice_jwt"]
        status, headers, room = http("POST", base, "/rooms", {"display_name": "Interop"}, token)
        expect(status == 201, f"POST /rooms: {status} {room}")
        expect(room.get("display_name") == "Interop" and isinstance(room.get("id"), str), f"room: {room}")
        expect(headers.get("Location") == "/rooms/" + room["id"], f"Location: {headers.get('Location')}")
        state["room"] = room["id"]
        status, _, rooms = http("GET", base, "/rooms", token=token)
        expect(status == 200 and isinstance(rooms, list), f"GET /rooms: {status} {rooms}")
        expect(any(r.get("id") == room["id"] and r.get("display_name") == "Interop" for r in rooms),
               f"GET /rooms lacks {room['id']}: {rooms}")
        status, _, one = http("GET", base, "/rooms/" + room["id"], token=token)
        expect(status == 200 and one.get("id") == room["id"], f"GET /rooms/{{id}}: {status} {one}")

    @step("GET /ws without a token is refused with 401 before the upgrade")
    def _():
        url = state["base"].replace("http://", "ws://", 1) + "/ws"
        try:
            connect(url, open_timeout=RECEIVE_TIMEOUT, proxy=None).close()
        except InvalidStatus as error:
            expect(error.response.status_code == 401, f"expected 401, got {error.response.status_code}")
            return
        raise CheckFailed("the upgrade succeeded without a token")

    @step("alice and bob connect and each receives session:success")
    def _():
        for name in ("alice", "bob"):
            ws = ws_connect(state["base"], state[name + "_jwt"])
            sockets.append(ws)
            state[name + "_ws"] = ws
            hello = receive(ws, "session:success", lambda m: m.get("type") == "session:success")
            body = hello.get("body") or {}
            expect(isinstance(body.get("session_id"), str) and body["session_id"], f"session:success: {hello}")
            expect((body.get("user") or {}).get("name") == name, f"session:success user should be {name}: {hello}")
            if state.get(name + "_id"):
                expect(body["user"].get("id") == state[name + "_id"], f"user id differs from /auth's: {hello}")

    @step("both join; bob's reply lists alice and bob; alice sees member:joined about bob")
    def _():
        alice, bob, cid = state["alice_ws"], state["bob_ws"], state["room"]
        joined = expect_success(request(alice, "conversation:join", "1", {"cid": cid}), "conversation:join")
        expect([m["user"]["name"] for m in joined.get("members", [])] == ["alice"], f"alice's join reply: {joined}")
        state["alice_member"] = joined.get("member_id")
        own = receive(alice, "alice's own member:joined", is_event("member:joined", cid, state["alice_member"]))
        check_event_shape(own, "member:joined", cid, state["alice_member"], "alice")

        joined = expect_success(request(bob, "conversation:join", "1", {"cid": cid}), "conversation:join")
        names = [m["user"]["name"] for m in joined.get("members", [])]
        expect(names == ["alice", "bob"], f"bob's join reply should list alice and bob, got {names}")
        expect(joined.get("cid") == cid and isinstance(joined.get("member_id"), str), f"bob's join reply: {joined}")
        state["bob_member"] = joined.get("member_id")

        seen = receive(alice, "member:joined about bob", is_event("member:joined", cid, state["bob_member"]))
        check_event_shape(seen, "member:joined", cid, state["bob_member"], "bob")
        expect(seen["id"] == own["id"] + 1, f"event ids should follow on: {own['id']} then {seen['id']}")
        state["last_event"] = seen["id"]

    @step("bob leaves; alice receives member:left reason left with bob's member_id")
    def _():
        alice, bob, cid = state["alice_ws"], state["bob_ws"], state["room"]
        expect_success(request(bob, "conversation:leave", "2", {"cid": cid}), "conversation:leave")
        left = receive(alice, "member:left about bob", is_event("member:left", cid, state["bob_member"]))
        check_event_shape(left, "member:left", cid, state["bob_member"], "bob")
        expect(left["body"].get("reason") == "left", f"reason should be left: {left}")
        expect(left["id"] == state["last_event"] + 1, f"event ids should follow on: {state['last_event']} then {left['id']}")

    @step("a 30 KB session:ping sent in 10 KB fragments gets its reply")
    def _():
        alice = state["alice_ws"]
        text = padded_ping("big-1", 30 * 1024)
        alice.send(fragments(text, 10 * 1024))  # an iterable: one message in continuation frames
        reply = receive(alice, "reply to the fragmented ping", lambda m: m.get("tid") == "big-1" or m.get("type") == "error")
        expect_success(reply, "session:ping")

    @step("a 40 KB session:ping (one frame, 16-bit length) gets the too-large error; the socket stays usable")
    def _():
        alice = state["alice_ws"]
        alice.send(padded_ping("big-2", 40 * 1024))
        reply = receive(alice, "reply to the 40 KB ping", lambda m: m.get("type") in ("error", "session:ping:success"))
        expect(reply.get("type") == "error" and (reply.get("body") or {}).get("code") == "request:error:too-large",
               f"a 40 KB request is over the default --max-request-bytes 32768: {json.dumps(reply)[:300]}")
        expect_success(request(alice, "session:ping", "small-1", {}), "session:ping")

    @step("a 70 KB message (64-bit length) is refused with close 1009")
    def _():
        ws = ws_connect(state["base"], state["bob_jwt"])
        sockets.append(ws)
        receive(ws, "session:success", lambda m: m.get("type") == "session:success")
        ws.send(padded_ping("huge", 70 * 1024))
        deadline = time.monotonic() + RECEIVE_TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            expect(remaining > 0, "the server did not close the connection")
            try:
                ws.recv(timeout=remaining)
            except TimeoutError:
                continue
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else None
                expect(code == 1009, f"expected close code 1009, got {code} ({closed})")
                return

    @step("GET /rooms/{id}/events holds the three member events in order")
    def _():
        status, _, page = http("GET", state["base"], f"/rooms/{state['room']}/events", token=state["alice_jwt"])
        expect(status == 200, f"events: {status} {page}")
        kinds = [(e.get("type"), (e.get("body") or {}).get("member_id")) for e in page.get("events", [])]
        wanted = [("member:joined", state["alice_member"]), ("member:joined", state["bob_member"]),
                  ("member:left", state["bob_member"])]
        expect(kinds == wanted, f"events {kinds}, expected {wanted}")
        expect([e["id"] for e in page["events"]] == [1, 2, 3], f"event ids: {[e['id'] for e in page['events']]}")

    @step("SIGTERM: a connected client gets close 1001, the server exits 0")
    def _():
        alice = state["alice_ws"]
        for ws in sockets:
            if ws is not alice:
                ws.close()
        os.kill(server.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + RECEIVE_TIMEOUT
        code = None
        while code is None:
            remaining = deadline - time.monotonic()
            expect(remaining > 0, "the server did not close the WebSocket on SIGTERM")
            try:
                alice.recv(timeout=remaining)
            except TimeoutError:
                continue
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else -1
        expect(code == 1001, f"expected close code 1001 (going away), got {code}")
        try:
            status = server.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise CheckFailed(f"the server did not exit within {STOP_TIMEOUT:.0f} s of SIGTERM")
        expect(status == 0, f"exit status {status}")

    passed = failed = skipped = 0
    try:
        for index, (name, function) in enumerate(steps):
            try:
                function()
                passed += 1
                print(f"ok   {name}", flush=True)
            except Exception as error:  # noqa: BLE001 - every failure is reported, then the rest is skipped
                failed += 1
                kind = "" if isinstance(error, CheckFailed) else f"{type(error).__name__}: "
                print(f"FAIL {name}\n     {kind}{error}", flush=True)
                skipped = len(steps) - index - 1
                break
    finally:
        for ws in sockets:
            try:
                ws.close()
            except Exception:
                pass
        server.stop()
        if failed:
            print("---- server log (last lines) ----\n" + server.log_tail() + "\n----", flush=True)

    summary = f"interop: {passed} passed, {failed} failed"
    if skipped:
        summary += f", {skipped} skipped"
    print(summary, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
