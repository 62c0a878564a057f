"""``fuzz --cases N``: a budget counted in work. The same seed and N run the same cases on a quiet
machine and on one with a CPU hog beside it, and give the same reports but for the clock's own
figures (the seconds a run and a shrink took)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GREEDY = f"greedy=cmd:{sys.executable} {ROOT / 'examples' / 'engines' / 'greedy_engine.py'} {{gguf}}"
TIMED = {"seconds", "timing", "found_after", "shrink_seconds", "run_id", "signature", "started"}  # the clock's figures


def fuzz(out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity", "fuzz", "llama-spm", "-b", GREEDY, "--seed", "3",
                           "-o", str(out), "-q", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def untimed(value: object) -> object:
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMED}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def test_a_case_budget_gives_the_same_run_under_a_cpu_hog(tmp_path, zoo):
    zoo("llama-spm")
    quiet = fuzz(tmp_path / "quiet", "--cases", "800")
    # One hog per core (two at least) keeps every core busy; each stops by itself after two minutes, whatever
    # becomes of this test.
    hog = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(max(2, os.cpu_count() or 1))]
    try:
        loaded = fuzz(tmp_path / "loaded", "--cases", "800")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert quiet.returncode == loaded.returncode == 1, quiet.stderr + loaded.stderr
    for name in ("mismatches.csv", "fuzz-findings.jsonl"):
        assert (tmp_path / "quiet" / name).read_bytes() == (tmp_path / "loaded" / name).read_bytes(), name
    summaries = [json.loads((tmp_path / run / "summary.json").read_text("utf-8")) for run in ("quiet", "loaded")]
    assert summaries[0]["options"]["fuzz"]["cases"] == 800
    assert summaries[0]["options"]["fuzz"]["by_source"] == {"gen:unicode-seams": 640, "hypothesis": 160}
    assert untimed(summaries[0]) == untimed(summaries[1])


def test_a_case_budget_is_kept_by_a_resume_and_checked(tmp_path, zoo):
    zoo("llama-spm")
    done = fuzz(tmp_path / "run", "--cases", "300", "--no-hypothesis")
    assert done.returncode == 1, done.stderr
    header = json.loads((tmp_path / "run" / "cases.jsonl").read_text("utf-8").split("\n", 1)[0])
    assert header["args"]["cases"] == 300
    again = subprocess.run([sys.executable, "-m", "tokparity", "fuzz", "--resume", str(tmp_path / "run"), "-q"],
                           capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert again.returncode == 1, again.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    assert summary["options"]["fuzz"]["cases"] == 300  # nothing more to run
    refused = fuzz(tmp_path / "zero", "--cases", "0")
    (line,) = refused.stderr.strip().splitlines()
    assert refused.returncode == 2 and line.startswith("tokparity: error: argument --cases: must be a whole number "
                                                      "from 1 to "), line
