"""The real command line, run as a user runs it, for the tests that judge what it prints and writes.

The child starts isolated (``-P``): the test's current folder never reaches its path. It imports
tokparity from this checkout. A ``$GITHUB_STEP_SUMMARY`` of the machine running the tests is left
out, so a run never writes to a CI's summary; a test that wants one passes it in ``env``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tokparity(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600,
              **run: object) -> subprocess.CompletedProcess:
    """``python -P -m tokparity ARGS`` in ``cwd``; stdout and stderr captured as text unless
    ``run`` says otherwise (``stdout=…``)."""
    environment = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    environment.update({"PYTHONPATH": str(ROOT)}, **(env or {}))
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **run}
    return subprocess.run([sys.executable, "-P", "-m", "tokparity", *args], cwd=cwd, env=environment, text=True,
                          timeout=timeout, **streams)  # type: ignore[call-overload]


def one_error(done: subprocess.CompletedProcess) -> str:
    """The one error line of a run that refused its input (exit 2): the test fails on anything else."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("tokparity: error: "), line
    return line
