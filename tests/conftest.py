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


@pytest.hookimpl(tryfirst=True)  # (before pytest-xdist's, which reads the groups)
def pytest_collection_modifyitems(config, items):
    """``nox -s tests`` runs the suite on every core (pytest-xdist, ``--dist loadgroup``): each test
    file stays on one worker, so its module fixtures run once. A test marked with a group of its own
    (``xdist_group("ray")``: a second Ray started beside the first would join it) runs with its group."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """Node ids without their group would run a test file's tests on both cores: module fixtures
    twice, two Rays side by side. Such a pytest is refused, not run slowly."""
    if node.config.getvalue("dist") == "loadgroup" and ids and "@" not in ids[0]:
        pytest.exit(f"pytest {pytest.__version__} ignores pytest-xdist's test groups (--dist loadgroup); "
                    "install the pytest that pyproject.toml's test extra names", returncode=4)


@pytest.fixture(scope="session")
def zoo():
    """``zoo("llama-spm") -> ModelFiles``, fetching on first use (cached across runs)."""
    cache: dict[str, ModelFiles] = {}

    def get(name: str) -> ModelFiles:
        if name not in cache:
            cache[name] = resolve_model(name)
        return cache[name]

    return get
