# Parlor: build, run and test.
#
#   make run    install missing system packages, build (debug) and serve on http://localhost:8080, data in ./data
#   make test   install missing system packages, build, run `swift test`, the docs/testing.md consumer package,
#               its shell recipe, the Python interop test, the web client's unit tests (node --test Tests/web), the
#               Python and JavaScript clients' suites (clients/python, clients/js) and
#               the browser tests (direct and through TURN; the audience test once more with the AES_CM SRTP profile
#               forced; the stage test once more over two nodes behind nginx), and build every fuzz target and run
#               each for FUZZ_CHECK_SECONDS (so a target that stops building fails)
#
# `make run` uses the debug build on purpose: from a clean clone it compiles in well under half the time of
# `-c release`, and it is the binary the tests use too. For a release binary see docker/Dockerfile, or run
# `swift build -c release --product parlor` and start .build/release/parlor serve.

SHELL := /bin/bash
.DEFAULT_GOAL := help

SWIFT ?= swift
PYTHON ?= python3
VENV ?= .venv
# Extra flags, e.g. SWIFT_BUILD_FLAGS="-Xswiftc -warnings-as-errors". Nothing here hides compiler warnings.
SWIFT_BUILD_FLAGS ?=
SWIFT_TEST_FLAGS ?=
# The async tests (ParlorClientTests: ParlorClient, ParlorTesting) run in a swift test process of their own, beside
# the rest. In one process they shared the Swift concurrency pool, as many threads as cores (two here), with hundreds
# of synchronous tests that block their thread on sockets and child processes: two long ones (the SIGKILL torture,
# the recording's audio test) held both threads for ~100 s, trivial tests waited that long to start, and client tests
# stalled between steps past a 60 s room TTL, a 1 s grace period's 5 s wait or a 15 s pong timeout (the CI failures
# at ccb3cb5 and in a local run at eaa55c7). Their own process has a pool nothing blocks; so do ParlorAppTests' two
# suites that drive ParlorClient.
CLIENT_TESTS := ParlorClientTests\.|ParlorAppTests\.(RecordingClientTests|LiveStreamClientTests)/
# Extra options for `make run`, e.g. RUN_ARGS="--port 9000 --log-level debug" (see parlor serve --help).
RUN_ARGS ?=

PARLOR_BIN := .build/debug/parlor
APT_PACKAGES := libsqlite3-dev libssl-dev libjwt-dev libpq-dev libopus-dev pkg-config python3-venv
# What only the tests need: a real browser and its driver, coturn (a real TURN server), iproute2 for the
# loopback-only network namespace, and PostgreSQL (`swift test` starts a private cluster of its own: initdb and
# pg_ctl in a temporary directory, on a free loopback port, as the postgres user when run as root), and opus-tools
# (opusinfo) and ffmpeg, the independent readers the recording files are checked with; nodejs runs the web client's
# unit tests (Tests/web: `node --test`, WebCrypto built in); node-ws is the WebSocket the JavaScript client loads on a
# Node without one (clients/js, NODE_PATH=/usr/share/nodejs); nginx-light is the balancer in front of several nodes
# (ClusterBalancerTests, and the browser stage test over two nodes).
TEST_APT_PACKAGES := chromium chromium-driver coturn iproute2 postgresql nginx-light opus-tools ffmpeg nodejs node-ws
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
VENV_STAMP := $(VENV)/.installed
REQUIREMENTS := Tests/interop/requirements.txt

.PHONY: help deps test-deps build run test venv interop python-client web web-chromium js-client consumer browser browser-srtp fuzz fuzz-check asan tsan readme-options clean

help:
	@echo "make run      build (debug) and serve on http://localhost:8080 with data in ./data"
	@echo "make test     swift test, the docs/testing.md consumer package and shell and audio recipes, the Python interop test, the web unit tests, the Python and JavaScript clients' suites (with docs/testing.md's recipes) and the browser tests (two users, through TURN, a stage room (also over two nodes behind nginx), an SFU audience)"
	@echo "make deps     install missing Debian packages: $(APT_PACKAGES)"
	@echo "make build    swift build (debug)"
	@echo "make venv     $(VENV) with the interop test's Python packages ($(REQUIREMENTS))"
	@echo "make consumer only the scratch package written from docs/testing.md (builds Parlor again in a temp dir)"
	@echo "make interop  only the Python interop test (builds first)"
	@echo "make python-client  install clients/python into $(VENV) and run its pytest suite and docs/testing.md's Python recipes (builds first)"
	@echo "make web      only the web client's unit tests (node --test Tests/web: the end-to-end encryption library)"
	@echo "make js-client  the JavaScript client's tests (node --test clients/js/test: against the built parlor, and docs/testing.md's JavaScript recipe)"
	@echo "make web-chromium  the encryption library in a real headless Chromium: a tone through two peer connections in one page (not part of make test)"
	@echo "make browser  only the browser WebRTC tests: two users, through coturn, a stage room, an SFU audience (headless Chromium in a loopback-only namespace; root)"
	@echo "make browser-srtp  the browser tests twice, with each SRTP profile forced in turn (--srtp-profiles)"
	@echo "make fuzz     libFuzzer on the HTTP parser, WebSocket decoder, JSON decoder, JWT claims, the STUN, RTP/RTCP and SDP parsers, SRTP/SRTCP unprotect, the Ogg Opus reader and track writer, and the media link's packets and offers (FUZZ_SECONDS each, default 60)"
	@echo "make fuzz-check  build every fuzz target and run each for FUZZ_CHECK_SECONDS (default 3); part of make test"
	@echo "make asan     swift test under AddressSanitizer"
	@echo "make tsan     swift test under ThreadSanitizer"
	@echo "make readme-options  regenerate README.md's configuration table from parlor serve --help"
	@echo "make docker-check  build docker/Dockerfile with podman on Debian base images made here, smoke-test the image, remove it (root; not part of make test)"
	@echo "make clean    remove .build and $(VENV) (./data is left alone)"

# Quick when everything is there: dpkg is asked, apt only runs for what is missing.
deps: PACKAGES = $(APT_PACKAGES)
test-deps: PACKAGES = $(APT_PACKAGES) $(TEST_APT_PACKAGES)
deps test-deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: '$(SWIFT)' not found: install a Swift 6 toolchain and put it on PATH" >&2; exit 1; }
	@if ! command -v dpkg >/dev/null; then \
		echo "deps: no dpkg here; install by hand: $(PACKAGES)"; \
	else \
		missing=""; \
		for package in $(PACKAGES); do \
			dpkg -s $$package 2>/dev/null | grep -q '^Status: install ok installed' || missing="$$missing $$package"; \
		done; \
		if [ -n "$$missing" ]; then \
			echo "deps: installing$$missing"; \
			$(SUDO) apt-get update && \
			$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
		fi; \
	fi

build:
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

run: deps build
	$(PARLOR_BIN) serve $(RUN_ARGS)

$(VENV_STAMP): $(REQUIREMENTS)
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(REQUIREMENTS)
	@touch $@

venv: $(VENV_STAMP)

interop: venv build
	PARLOR_BIN=$(PARLOR_BIN) $(VENV)/bin/python Tests/interop/tutorial_flow.py

# The Python package (clients/python) installed as a team would, then its own tests, which also run
# docs/testing.md's Python recipes, against the built binary.
python-client: venv build
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check ./clients/python
	cd clients/python && PARLOR_BIN=$(abspath $(PARLOR_BIN)) $(abspath $(VENV))/bin/python -m pytest -q -p no:cacheprovider tests

web:
	node --test Tests/web/

web-chromium:
	bash Tests/web/chromium/run.sh

# The JavaScript client (clients/js) against the built binary. Node 20 has no WebSocket of its own: Debian's node-ws
# (make test-deps installs it).
js-client: build
	PARLOR_BIN=$(PARLOR_BIN) NODE_PATH=/usr/share/nodejs node --test clients/js/test/

# Every suite runs even if an earlier one fails, so one run shows every failure; the exit status is nonzero if any did.
# The fuzz check builds and runs in the background meanwhile (its own compiler runs, no shared build directory), and
# the Python and JavaScript clients' suites (seconds of mostly waiting on sockets) run beside the consumer package's
# build, their logs shown after it.
test: test-deps venv build
	@swift_status=0; consumer_status=0; recipe_status=0; interop_status=0; web_status=0; python_status=0; js_status=0; browser_status=0; fuzz_status=0; \
	mkdir -p .build; \
	FUZZ_JOBS=2 bash Tests/Fuzz/run.sh $(FUZZ_CHECK_SECONDS) >.build/fuzz-check.log 2>&1 & fuzz_pid=$$!; \
	echo "== swift test (ParlorClientTests in a second process alongside: .build/swift-test-client.log, shown after)"; \
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS) || swift_status=$$?; \
	PARLOR_PYTHON=$(VENV)/bin/python $(SWIFT) test --skip-build --filter '$(CLIENT_TESTS)' $(SWIFT_TEST_FLAGS) >.build/swift-test-client.log 2>&1 & client_pid=$$!; \
	PARLOR_PYTHON=$(VENV)/bin/python $(SWIFT) test --skip-build --skip '$(CLIENT_TESTS)' $(SWIFT_TEST_FLAGS) || swift_status=$$?; \
	wait $$client_pid || swift_status=$$?; \
	echo "== swift test, ParlorClientTests (its own process)"; \
	grep -E '✘|Test run with|error:' .build/swift-test-client.log || tail -20 .build/swift-test-client.log; \
	{ $(VENV)/bin/python -m pip install --quiet --disable-pip-version-check ./clients/python && \
	  (cd clients/python && PARLOR_BIN=$(abspath $(PARLOR_BIN)) $(abspath $(VENV))/bin/python -m pytest -q -p no:cacheprovider tests); } \
	  >.build/python-client.log 2>&1 & python_pid=$$!; \
	PARLOR_BIN=$(PARLOR_BIN) NODE_PATH=/usr/share/nodejs node --test clients/js/test/ >.build/js-client.log 2>&1 & js_pid=$$!; \
	echo "== consumer (Tests/consumer/run.sh: a package written from docs/testing.md; the Python and JavaScript clients' suites run alongside)"; \
	SWIFT=$(SWIFT) bash Tests/consumer/run.sh || consumer_status=$$?; \
	echo "== shell recipe (Tests/consumer/shell_recipe.sh: docs/testing.md's script against parlor serve --dev)"; \
	PARLOR_BIN=$(PARLOR_BIN) bash Tests/consumer/shell_recipe.sh || recipe_status=$$?; \
	echo "== audio recipe (Tests/consumer/shell_recipe.sh audio: docs/testing.md's bob-heard-alice script, join --play/--record)"; \
	PARLOR_BIN=$(PARLOR_BIN) bash Tests/consumer/shell_recipe.sh audio || recipe_status=$$?; \
	echo "== interop (Tests/interop/tutorial_flow.py)"; \
	PARLOR_BIN=$(PARLOR_BIN) $(VENV)/bin/python Tests/interop/tutorial_flow.py || interop_status=$$?; \
	echo "== web unit tests (node --test Tests/web)"; \
	node --test Tests/web/ || web_status=$$?; \
	wait $$python_pid || python_status=$$?; \
	echo "== Python client (clients/python: its pytest suite and docs/testing.md's Python recipes; ran beside the consumer build)"; \
	if [ $$python_status -eq 0 ]; then tail -1 .build/python-client.log; else cat .build/python-client.log; fi; \
	wait $$js_pid || js_status=$$?; \
	echo "== JavaScript client (node --test clients/js/test: its suite and docs/testing.md's JavaScript recipe; ran beside the consumer build)"; \
	if [ $$js_status -eq 0 ]; then grep -E '^# (tests|pass|fail|duration)' .build/js-client.log; else cat .build/js-client.log; fi; \
	echo "== browser (Tests/browser/run.sh)"; \
	PARLOR_BIN=$(PARLOR_BIN) BROWSER_PYTHON=$(VENV)/bin/python PARLOR_SCREENSHOT=.build/screenshot-room.png PARLOR_STAGE_SCREENSHOT=.build/screenshot-stage.png PARLOR_RECORDING_SCREENSHOT=.build/screenshot-recording.png PARLOR_E2EE_SCREENSHOT=.build/screenshot-e2ee.png $(SUDO) bash Tests/browser/run.sh || browser_status=$$?; \
	echo "== browser, the other SRTP profile (sfu_audience.py with AES_CM_128_HMAC_SHA1_80 forced; the run above negotiates GCM)"; \
	$(SUDO) env PARLOR_SRTP_PROFILES=AES_CM_128_HMAC_SHA1_80 PARLOR_BIN=$(PARLOR_BIN) BROWSER_PYTHON=$(VENV)/bin/python bash Tests/browser/run.sh sfu_audience.py || browser_status=$$?; \
	echo "== browser, two nodes (stage_room.py through nginx over two nodes on one PostgreSQL; the audio crosses their media link)"; \
	$(SUDO) env PARLOR_BROWSER_CLUSTER=1 PARLOR_BIN=$(PARLOR_BIN) BROWSER_PYTHON=$(VENV)/bin/python PARLOR_STAGE_SCREENSHOT=.build/screenshot-stage-cluster.png bash Tests/browser/run.sh stage_room.py || browser_status=$$?; \
	echo "== fuzz check (Tests/Fuzz/run.sh $(FUZZ_CHECK_SECONDS): every target builds and runs; log .build/fuzz-check.log)"; \
	wait $$fuzz_pid || fuzz_status=$$?; \
	grep -E '^(build of|[a-z-]+ +(ok|FAILED) )|^    ' .build/fuzz-check.log || tail -20 .build/fuzz-check.log; \
	if [ $$swift_status -ne 0 ] || [ $$consumer_status -ne 0 ] || [ $$recipe_status -ne 0 ] || [ $$interop_status -ne 0 ] || [ $$web_status -ne 0 ] || [ $$python_status -ne 0 ] || [ $$js_status -ne 0 ] || [ $$browser_status -ne 0 ] || [ $$fuzz_status -ne 0 ]; then \
		echo "make test: FAILED (swift test exit $$swift_status, consumer exit $$consumer_status, shell recipe exit $$recipe_status, interop exit $$interop_status, web unit tests exit $$web_status, Python client exit $$python_status, JavaScript client exit $$js_status, browser exit $$browser_status, fuzz check exit $$fuzz_status)" >&2; \
		exit 1; \
	fi

consumer: deps
	SWIFT=$(SWIFT) bash Tests/consumer/run.sh

browser: test-deps venv build
	PARLOR_BIN=$(PARLOR_BIN) BROWSER_PYTHON=$(VENV)/bin/python $(SUDO) bash Tests/browser/run.sh

# The browser tests once per SRTP profile, each forced in turn (the server reads PARLOR_SRTP_PROFILES;
# sfu_audience.py checks that every page's connection uses it).
browser-srtp: test-deps venv build
	@for profile in AEAD_AES_128_GCM AES_CM_128_HMAC_SHA1_80; do \
		echo "== browser with --srtp-profiles $$profile"; \
		$(SUDO) env PARLOR_SRTP_PROFILES=$$profile PARLOR_BIN=$(PARLOR_BIN) BROWSER_PYTHON=$(VENV)/bin/python bash Tests/browser/run.sh || exit 1; \
	done

FUZZ_SECONDS ?= 60
fuzz: deps
	bash Tests/Fuzz/run.sh $(FUZZ_SECONDS)

FUZZ_CHECK_SECONDS ?= 3
fuzz-check: deps
	FUZZ_JOBS=2 bash Tests/Fuzz/run.sh $(FUZZ_CHECK_SECONDS)

# Each sanitizer builds into its own directory, so neither disturbs the normal .build/debug.
# Leak reports are off: at exit LeakSanitizer flags a few bytes XCTest and Foundation.Process keep (toolchain
# code, not ours), and child servers that exit(0) with threads still running. Memory errors are all still caught.
asan: deps
	PARLOR_SANITIZER=address ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --sanitize=address --scratch-path .build/asan $(SWIFT_TEST_FLAGS)

tsan: deps
	PARLOR_SANITIZER=thread $(SWIFT) test --sanitize=thread --scratch-path .build/tsan $(SWIFT_TEST_FLAGS)

# Needs root and a container runtime, which make test does not: installs podman, runc and debootstrap from Debian.
.PHONY: docker-check
docker-check:
	bash docker/check.sh

# The README's configuration table comes from the binary's own option list.
readme-options: build
	PARLOR_BIN=$(PARLOR_BIN) $(PYTHON) Tests/interop/options_table.py --update README.md

clean:
	rm -rf .build $(VENV)
