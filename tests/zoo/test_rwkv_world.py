"""rwkv-world end to end: the rwkv package judges, the reference agrees with it everywhere, and
llama.cpp on the GGUF tokparity converts differs only where its trie holds '<s>' (a reviewed known
divergence whose cause the diagnosis reproduces)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

WORKTREE = Path(__file__).resolve().parents[2]


def _compare(out: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "tokparity", "compare", "rwkv-world", "-c", "edge", "-c", "multilingual",
            "-c", "emoji", "-c", "llama.cpp-tests", "-b", "ref", "-b", "rwkv", "-b", "llama.cpp", "-o", str(out),
            "-q", *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(WORKTREE)})


def test_compare_rwkv_world(zoo, tmp_path):
    zoo("rwkv-world")  # fetched and converted once per machine
    proc = _compare(tmp_path / "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    runs = {r["backend"]: r for r in summary["runs"]}
    assert {r["oracle"] for r in runs.values()} == {"rwkv"}  # the model's own library judges
    assert set(runs) == {"ref", "llama.cpp"} and runs["ref"]["cases"] > 6000
    assert (runs["ref"]["mismatches"], runs["ref"]["unexplained"]) == (0, 0)
    llama = runs["llama.cpp"]
    assert (llama["mismatches"], llama["unexplained"]) == (7, 0)
    assert llama["classes"] == {"special-parsing": 7} and llama["causes"] == {"specials.parse": 7}
    assert summary["backends"]["rwkv"]["version"] == "0.8.32"


def test_with_llama_cpp_as_the_judge_the_same_seven_texts_fail_the_run(zoo, tmp_path):
    """--oracle llama.cpp: the rwkv package and the reference then differ on the same 7 texts, and
    the reviewed entry (about llama.cpp, not about them) does not hide them: exit 1."""
    zoo("rwkv-world")
    proc = _compare(tmp_path / "run", "--oracle", "llama.cpp")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    runs = {r["backend"]: r for r in summary["runs"]}
    assert runs["rwkv"]["mismatches"] == runs["ref"]["mismatches"] == runs["ref"]["unexplained"] == 7
