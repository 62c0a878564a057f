"""Running third-party tokenizers (tests/engines/thirdparty/) through ``tokparity compare`` in the
tests: the pinned npm packages installed once, ``cmd:`` specs for their wrappers, and one run's
summary and rows read back (tests/diagnose/test_third_party.py, test_real_packages.py)."""

from __future__ import annotations

import csv
import json
import shutil
import sys
import warnings
from collections import Counter
from pathlib import Path

import pytest

from tokparity.cli import main

ENGINES = Path(__file__).resolve().parents[1] / "engines" / "thirdparty"
sys.path.insert(0, str(ENGINES))
import install  # noqa: E402  (tests/engines/thirdparty/install.py)

sys.path.remove(str(ENGINES))


@pytest.fixture(scope="session")
def node_engines() -> Path:
    """The pinned npm packages, installed once; a loud skip when node or npm is missing."""
    missing = install.missing_tools()
    if missing:
        message = (f"third-party JavaScript engines NOT TESTED: {' and '.join(missing)} not found. Install Node.js 20+ "
                   f"with npm, then: {install.COMMAND}")
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)
    try:
        install.install(quiet=True)
    except RuntimeError as e:
        pytest.fail(f"could not install the pinned npm packages: {e}")
    return ENGINES


def node(script: str, *args: str) -> str:
    return f"cmd:{shutil.which('node') or 'node'} {ENGINES / script} {' '.join(args)}".rstrip()


def python(script: str, *args: str) -> str:
    return f"cmd:{sys.executable} {ENGINES / script} {' '.join(args)}".rstrip()


class Run:
    """One (model, backend) of a finished compare: its summary run and its mismatch rows."""

    def __init__(self, out: Path, exit_code: int = 0):
        self.exit_code = exit_code
        summary = json.loads((out / "summary.json").read_text("utf-8"))
        runs = [r for r in summary["runs"] if r["cases"] > 0 and r["backend"].startswith("cmd:")]
        self.run = max(runs, key=lambda r: r["cases"])  # the corpora's run, not the golden texts'
        with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
            self.rows = [r for r in csv.DictReader(f) if r["backend"] == self.run["backend"]]

    @property
    def root(self) -> dict:
        return self.run.get("root_cause") or {}

    @property
    def causes(self) -> Counter:
        return Counter(r["cause"] for r in self.rows)

    def share(self, cause: str) -> float:
        return sum(r["cause"] == cause for r in self.rows) / max(1, len(self.rows))


def compare(tmp_path: Path, model: str, backend: str, *corpora: str, flags: tuple[str, ...] | list[str] = ()) -> Run:
    """``tokparity compare MODEL -b BACKEND [-c CORPUS ...] [FLAGS]`` (the default corpora without one)."""
    out = tmp_path / "out"
    args = ["compare", model, "-b", backend, "-o", str(out), "-q", *flags]
    for corpus in corpora:
        args += ["-c", corpus]
    code = main(args)
    assert code in (0, 1)
    return Run(out, code)


def texts_file(tmp_path: Path, name: str, texts: list[str]) -> str:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps({"id": f"{name}-{i:02d}", "text": t}) + "\n" for i, t in enumerate(texts)),
                    "utf-8")
    return str(path)


