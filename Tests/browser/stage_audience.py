#!/usr/bin/env python3
"""A big stage room's audience in real (headless) Chromium: summary presence as a count and a paged grid of faces.

Run by run.sh inside the loopback-only network namespace. The server's --full-presence-limit is 6. alice creates a
stage room in her browser (its moderator), bob joins it in his as a listener; then 30 listeners join from plain
WebSocket clients (Python's websockets library, to keep it cheap), which takes the room past the limit into summary
presence. bob's page shows the audience as a count ("Audience (31)") and a page of 24 faces; "More" shows the
other 7, none of them on the first page. A 31st listener joins: bob's count goes to 32 through room:audience and the
newcomer's face appears on the last page (which had room), and alice's count (a moderator gets listeners' joins in
full) too. bob's page resumes after a dropped socket, still in summary on its page. Saves alice's page as
PARLOR_STAGE_AUDIENCE_SCREENSHOT (docs/images/stage-audience.png). Then listeners leave until the room is below
90 % of the limit: room:presence says full, and both pages list every member again, without a pager. Ends with `audience: N passed, M failed`.
"""
import json
import os
import time
import traceback
import urllib.request
import warnings

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select
from websockets.sync.client import connect

from browser_support import REPO, Person, check, click_join, run_script, wait_for

SCREENSHOT = os.environ.get("PARLOR_STAGE_AUDIENCE_SCREENSHOT", os.path.join(REPO, "docs/images/stage-audience.png"))
ROOM_NAME = "Big town hall"
LIMIT = 6
PAGE_SIZE = 24  # audience.js AUDIENCE_PAGE_SIZE
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))
# The listeners' connections live as long as the scenario, not a `with` block.
warnings.filterwarnings("ignore", message="connect\\(\\) must be used as a context manager")


class Listener:
    """A listener from a plain WebSocket client: signs in with POST /auth, joins, and leaves by request."""

    def __init__(self, base_url, name, cid):
        self.name = name
        request = urllib.request.Request(base_url + "/auth", data=json.dumps({"name": name}).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with HTTP.open(request, timeout=10) as response:
            token = json.loads(response.read())["jwt"]
        self.ws = connect(base_url.replace("http://", "ws://", 1) + "/ws?token=" + token, open_timeout=10,
                          close_timeout=5, proxy=None, max_size=1 << 22)
        self.tid = 0
        self.member_id = self.request("conversation:join", {"cid": cid})["member_id"]
        self.cid = cid

    def request(self, type_, body):
        self.tid += 1
        tid = str(self.tid)
        self.ws.send(json.dumps({"type": type_, "tid": tid, "body": body}))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv(timeout=deadline - time.monotonic()))
            if message.get("tid") == tid:
                if message.get("type") != type_ + ":success":
                    raise RuntimeError(f"{self.name}: {type_} answered {message}")
                return message.get("body") or {}
        raise RuntimeError(f"{self.name}: no reply to {type_}")

    def leave(self):
        """Leaves by request (closing the socket would keep the membership for the grace period)."""
        self.request("conversation:leave", {"cid": self.cid})
        self.ws.close()


def audience_names(person):
    """The names on the audience tiles, without "(you)"."""
    return [e.text.removesuffix(" (you)") for e in
            person.driver.find_elements(By.CSS_SELECTOR, "#audience .tile .tile-name")]


def text(person, css):
    elements = person.driver.find_elements(By.CSS_SELECTOR, css)
    return elements[0].text if elements and elements[0].is_displayed() else ""


def audience(server):
    alice = Person("alice", server.url)
    people = [alice]
    listeners = []
    try:
        bob = Person("bob", server.url)
        people.append(bob)
        if not (alice.sign_in() and bob.sign_in()):
            check("audience: two people sign in", False)
            return people
        Select(alice.find("#create-mode")).select_by_value("stage")
        alice.find("#create-name").send_keys(ROOM_NAME, Keys.ENTER)
        cid = wait_for("alice in the room", lambda: alice.visible("#room-view") and alice.hook("roomId"))
        click_join(bob, ROOM_NAME)
        bob_id = wait_for("bob in the room", lambda: bob.visible("#room-view") and bob.hook("memberId"))
        if not (cid and bob_id):
            check("audience: alice creates a stage room and bob joins it", False)
            return people
        check("audience: a small stage room is in full presence, without a pager",
              bob.hook("presence") == "full" and not bob.visible("#audience-pager")
              and wait_for("bob in alice's audience", lambda: "bob" in audience_names(alice), timeout=5),
              f"presence {bob.hook('presence')}, alice's audience {audience_names(alice)}")

        # 30 listeners from plain WebSocket clients: 32 members, past the limit of 6.
        for i in range(1, 31):
            listeners.append(Listener(server.url, f"listener{i:02d}", cid))
        check("audience: bob's page switches to summary and shows the count", wait_for("the summary", lambda: (
            bob.hook("presence") == "summary" and bob.hook("audienceCount") == 31
            and text(bob, "#audience-title") == "Audience (31)" and bob.visible("#audience-pager")), timeout=10),
              f"presence {bob.hook('presence')}, count {bob.hook('audienceCount')}, title {text(bob, '#audience-title')!r}")
        first_page = wait_for("a full first page", lambda: (
            len(audience_names(bob)) >= PAGE_SIZE and text(bob, "#audience-range") == "Showing 1–24 of 31"
            and audience_names(bob)), timeout=10)
        check("audience: the first page shows 24 faces (bob among them) and says which",
              first_page and len(first_page) == PAGE_SIZE and "bob" in first_page,
              f"{len(first_page or [])} faces: {first_page}, range {text(bob, '#audience-range')!r}")
        check("audience: the stage is shown in full", wait_for("alice on stage", lambda: alice.hook("memberId") and bob.driver.find_elements(
            By.CSS_SELECTOR, f'#tiles .tile[data-member-id="{alice.hook("memberId")}"]'), timeout=5))

        bob.find("#audience-next").click()
        second_page = wait_for("the second page", lambda: (
            text(bob, "#audience-range") == "Showing 25–31 of 31" and audience_names(bob)), timeout=10)
        others = [n for n in (second_page or []) if n != "bob"]
        check("audience: More shows the other 7 listeners, none from the first page",
              len(others) == 7 and not set(others) & set(first_page or []) and bob.find("#audience-next").get_attribute("disabled"),
              f"second page {second_page}, range {text(bob, '#audience-range')!r}")

        # A new listener: bob's count follows room:audience, and the last page (which has room) shows the face.
        listeners.append(Listener(server.url, "newcomer", cid))
        check("audience: a newcomer raises bob's count through room:audience and shows on the last page", wait_for(
            "the newcomer", lambda: bob.hook("audienceCount") == 32 and text(bob, "#audience-title") == "Audience (32)"
            and "newcomer" in audience_names(bob), timeout=10),
              f"count {bob.hook('audienceCount')}, faces {audience_names(bob)}")
        check("audience: alice's page (a moderator, who gets each join in full) counts the newcomer too", wait_for(
            "alice's count", lambda: alice.hook("audienceCount") == 32 and text(alice, "#audience-title") == "Audience (32)",
            timeout=10), f"alice's count {alice.hook('audienceCount')}")
        bob.find("#audience-previous").click()
        check("audience: Previous goes back to the first page", wait_for("page one again", lambda: (
            text(bob, "#audience-range") == "Showing 1–24 of 32" and audience_names(bob) == first_page), timeout=10),
              f"range {text(bob, '#audience-range')!r}, faces {audience_names(bob)}")

        # A dropped socket: bob's page resumes and stays in summary, on its page.
        bob.hook("dropConnection()")
        check("audience: after a dropped connection bob's page resumes in summary on the same page", wait_for(
            "bob resumed", lambda: bob.hook("resumes") >= 1 and bob.hook("state") == "connected"
            and bob.hook("presence") == "summary" and text(bob, "#audience-range") == "Showing 1–24 of 32"
            and audience_names(bob) == first_page, timeout=15),
              f"resumes {bob.hook('resumes')}, presence {bob.hook('presence')}, range {text(bob, '#audience-range')!r}")

        alice.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                     {"width": 1000, "height": 1300, "deviceScaleFactor": 1, "mobile": False})
        alice.js("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
        wait_for("alice's first page", lambda: text(alice, "#audience-range").startswith("Showing 1–24"), timeout=5)
        os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
        check("audience: screenshot of alice's big stage room saved", alice.driver.save_screenshot(SCREENSHOT), SCREENSHOT)

        # Below 90 % of the limit (5 members: alice, bob and 3 listeners) the room is in full presence again.
        while len(listeners) > 3:
            listeners.pop().leave()
        names = sorted(["bob"] + [l.name for l in listeners])
        for person in (bob, alice):
            check(f"audience: {person.name}'s page lists every member again after room:presence full", wait_for(
                f"{person.name} in full presence", lambda: (
                    person.hook("presence") == "full" and not person.visible("#audience-pager")
                    and sorted(audience_names(person)) == names and text(person, "#audience-title") == "Audience (4)"),
                timeout=10),
                  f"presence {person.hook('presence')}, faces {audience_names(person)}, title {text(person, '#audience-title')!r}")
    except Exception:
        traceback.print_exc()
        check("the audience scenario ran to the end", False, "exception above")
    finally:
        for listener in listeners:
            try:
                listener.ws.close()
            except Exception:
                pass
    return people


if __name__ == "__main__":
    run_script("audience", audience, "--full-presence-limit", str(LIMIT), "--auth-rate", "0")
