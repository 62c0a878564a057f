"""How the command ends: without Python's teardown (tokparity/start.py), yet with everything said
and written, and with what a profiler saw."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_runs import ROOT, tokparity


def test_a_profiled_command_writes_its_profile(tmp_path):
    """cProfile writes what it saw after the command returns: the command must return to it."""
    profile = tmp_path / "run.prof"
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-P", "-m", "cProfile", "-o", str(profile), "-m", "tokparity", "zoo",
                           "list"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert profile.stat().st_size > 10_000


def test_what_it_prints_into_a_file_is_all_there(tmp_path):
    """The last lines are still in Python's buffer when the command ends: they are flushed first."""
    piped = tokparity("zoo", "list")
    assert piped.returncode == 0 and piped.stdout.count("\n") > 30
    listing = tmp_path / "zoo.txt"
    with open(listing, "w") as out:
        into_a_file = tokparity("zoo", "list", stdout=out)
    assert into_a_file.returncode == 0
    assert Path(listing).read_text("utf-8") == piped.stdout


def test_its_exit_status_is_the_verdict(tmp_path, zoo):
    """A run that fails exits 1 through the same quick exit; one that passes, 0."""
    zoo("llama-spm")
    texts = tmp_path / "texts.txt"
    texts.write_text("Hello world\n", "utf-8")
    engine = ROOT / "examples" / "engines" / "greedy_engine.py"
    passing = tokparity("compare", "llama-spm", "-c", str(texts), "-b", "ref", "-q", "-o", str(tmp_path / "a"))
    assert passing.returncode == 0, passing.stderr
    failing = tokparity("compare", "llama-spm", "-c", "edge", "-b", f"cmd:{{python}} {engine} {{gguf}}", "-q",
                        "--no-diagnose", "-o", str(tmp_path / "b"))
    assert failing.returncode == 1, failing.stderr
    assert (tmp_path / "b" / "summary.json").is_file()
