"""The plugin's own contract: a clear failure without a binary, and the process stopped by PID."""

import os
import subprocess
import sys

from parlor.testserver import ParlorProcess, find_parlor_binary


def test_without_a_binary_the_fixture_says_how_to_provide_one(tmp_path):
    (tmp_path / "test_needs_server.py").write_text("async def test_x(parlor_server):\n    pass\n")
    env = {**os.environ, "PARLOR_BIN": str(tmp_path / "missing" / "parlor")}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert f"parlor_server: PARLOR_BIN={tmp_path}/missing/parlor is not an executable file" in result.stdout


def test_the_process_prints_its_address_and_stops_by_pid():
    process = ParlorProcess(find_parlor_binary())
    try:
        assert process.url.startswith("http://127.0.0.1:")
        process.reset()  # the dev admin token works on the test-mode route
    finally:
        status = process.stop()
    assert status is not None and process.process.poll() is not None
    assert not os.path.exists(process.workdir)  # its files (./data, logs) went with it
    try:
        os.kill(process.pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive
