"""pytest plugin (entry point `pytest11`): the `parlor_server` fixture and a runner for its async tests.

- `parlor_server_args` (session scope; override it in a conftest.py): extra `parlor serve` flags after `--dev`.
- `parlor_process` (session scope): the binary (PARLOR_BIN or `parlor` on PATH) started once with
  `--dev --port 0`, stopped by PID at the end.
- `parlor_server` (function scope): resets the server (`POST /admin/reset`) and yields a `TestParlor`; sessions
  made through it are closed when the test ends.

An `async def` test that uses `parlor_server` runs in a fresh event loop here, bounded by the ini option
`parlor_test_timeout` (seconds, default 120); no asyncio plugin is needed.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator

import pytest

from .testserver import ParlorBinaryNotFound, ParlorProcess, TestParlor


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("parlor_test_timeout", "seconds an async test using parlor_server may run (default 120)",
                  default="120")
    parser.addini("parlor_start_timeout", "seconds the parlor binary has to print its address (default 30)",
                  default="30")


@pytest.fixture(scope="session")
def parlor_server_args() -> list[str]:
    """Extra `parlor serve` flags after `--dev --port 0` (override in conftest.py, e.g. ["--grace-period", "1"])."""
    return []


@pytest.fixture(scope="session")
def parlor_process(request: pytest.FixtureRequest, parlor_server_args: list[str]) -> Iterator[ParlorProcess]:
    try:
        process = ParlorProcess(extra_args=parlor_server_args,
                                start_timeout=float(request.config.getini("parlor_start_timeout")))
    except ParlorBinaryNotFound as missing:
        pytest.fail(f"parlor_server: {missing}", pytrace=False)
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def parlor_server(parlor_process: ParlorProcess) -> Iterator[TestParlor]:
    parlor_process.reset()
    parlor = TestParlor(parlor_process)
    yield parlor
    if parlor.client._sessions or parlor.client._http is not None:
        # A sync test that used the fixture inside its own asyncio.run(): its loop is gone; drop what is left.
        parlor.client._sessions.clear()
        parlor.client._http = None


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    function = pyfuncitem.obj
    if not inspect.iscoroutinefunction(function) or "parlor_server" not in pyfuncitem.fixturenames:
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    parlor: TestParlor = pyfuncitem.funcargs["parlor_server"]
    timeout = float(pyfuncitem.config.getini("parlor_test_timeout"))

    async def run() -> None:
        try:
            async with asyncio.timeout(timeout):
                await function(**arguments)
        finally:
            await parlor.close()

    asyncio.run(run())
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """A failed test that used the server gets the end of the server's log in its report."""
    outcome = yield
    report = outcome.get_result()
    parlor = getattr(item, "funcargs", {}).get("parlor_server")
    if report.failed and isinstance(parlor, TestParlor):
        report.sections.append(("parlor server stderr (last 40 lines)", parlor.log_tail(40)))
