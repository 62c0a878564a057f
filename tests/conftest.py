"""Shared fixtures: zoo models fetched once per machine into the tokparity cache."""

from __future__ import annotations

import os
import signal

import processes
import pytest

from tokparity.zoo import ModelFiles, resolve_model

# A suite started in the background by a shell without job control (`bash .ci/run &` from a
# script) has SIGINT ignored, and so would every tokparity it starts (an ignored signal stays
# ignored across exec): the Ctrl-C tests would send a signal no process hears (exit 1, not 130).
# A handler of Python's own is reset to the default at exec, so the children hear it again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Every process a test starts inherits this mark, servers included: a test that looks for processes
# left behind finds its own process's, not those of the test process beside it (tests/processes.py).
os.environ[processes.MARK] = str(os.getpid())


# ``nox -s tests`` runs the suite on every core (pytest-xdist, ``--dist loadgroup``), one test at a
# time to whichever worker is free. A group keeps its tests on one worker: ``xdist_group("ray")``,
# since a second Ray started beside the first would join it. A file whose tests share a module
# fixture is a group too: otherwise each worker makes the fixture (a compare of many engines) once.
# Grouping every file was slower on 2 cores in the one run that measured it: 72 min against 60.
# pytest-xdist starts the largest groups first, so the single tests even out the end of the run.


@pytest.hookimpl(tryfirst=True)  # (before pytest-xdist reads the groups)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None and _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def _shares_a_module_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a fixture made once per file (or per class), for the file's other tests."""
    found = getattr(item, "_fixtureinfo", None)  # (pytest's record of a test's fixtures; doctests have none)
    return found is not None and any(
        defs and defs[-1].scope in ("module", "class") for defs in found.name2fixturedefs.values())


@pytest.fixture(scope="session")
def zoo():
    """``zoo("llama-spm") -> ModelFiles``, fetching on first use (cached across runs)."""
    cache: dict[str, ModelFiles] = {}

    def get(name: str) -> ModelFiles:
        if name not in cache:
            cache[name] = resolve_model(name)
        return cache[name]

    return get
