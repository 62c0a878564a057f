"""What a ninth hostile campaign broke (2026-11-30, a helper told only the promises of
docs/robustness.md), each as a user runs it:

- a hard link in the -o folder, named ``cases.jsonl`` or ``fuzz-findings.jsonl``, was written
  through: the journal key, a zoo file or tokparity's own list overwritten. Such a file is refused;
  so is an -o folder inside tokparity's cache or package;
- the llama-server build ran pip without ``-P``: a module of the current folder was imported;
- a run refused as "nothing compared" (a named backend that judged no case) wrote reports titled ✅;
- an engine's error kept its escape sequences in mismatches.csv and report.html.
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from pathlib import Path

from cli_runs import one_error, tokparity

import tokparity as package

ROOT = Path(__file__).resolve().parents[2]


def test_a_hard_link_where_the_run_writes_is_refused(tmp_path, zoo):
    zoo("llama-spm")
    precious = tmp_path / "journal-key"
    precious.write_text("KEY", "utf-8")
    for name in ("cases.jsonl", "fuzz-findings.jsonl"):
        (tmp_path / "o").mkdir(exist_ok=True)
        os.link(precious, tmp_path / "o" / name)
        line = one_error(tokparity("compare", "llama-spm", "-c", "edge", "-b", "ref", "-o", "o", "-q", cwd=tmp_path))
        assert f"{name}: is a hard link (2 names for one file), where the run writes a file of its own" in line
        assert precious.read_text("utf-8") == "KEY"
        (tmp_path / "o" / name).unlink()


def test_an_output_folder_inside_the_cache_is_refused(tmp_path, zoo):
    zoo("llama-spm")
    cache = tmp_path / "cache"
    cache.mkdir()
    line = one_error(tokparity("compare", "llama-spm", "-c", "edge", "-b", "ref", "-o", str(cache / "zoo" / "x"),
                               "-q", cwd=tmp_path, env={"TOKPARITY_CACHE": str(cache)}))
    assert "is a folder of tokparity's cache; the run writes its reports there" in line


def test_every_python_child_starts_with_minus_p():
    """Every Python child of tokparity starts through child_python.python_argv, which puts -P first
    (the current folder never on its path). The llama-server build ran ``python -m pip`` without."""
    started = re.compile(r"\[sys\.executable,\s*\"-m\"")
    found = [str(p) for p in Path(package.__file__).parent.rglob("*.py") if started.search(p.read_text("utf-8"))]
    assert not found, found


def test_a_named_engine_that_judged_nothing_is_never_titled_green(tmp_path, zoo):
    zoo("llama-spm")
    (tmp_path / "skips.py").write_text(
        "import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n"
        "    print(json.dumps({'id': r['id'], 'error': 'no', 'status': 'skipped'}), flush=True)\n", "utf-8")
    line = one_error(tokparity("compare", "llama-spm", "-c", "edge", "-b", f"e=cmd:{sys.executable} skips.py",
                               "-o", "out", "-q", "--no-diagnose", cwd=tmp_path))
    assert "nothing was compared: e judged no case" in line
    title = (tmp_path / "out" / "summary.md").read_text("utf-8").splitlines()[0]
    assert "⚠️ nothing compared: e judged no case" in title and "✅" not in title
    assert "✅" not in (tmp_path / "out" / "report.html").read_text("utf-8").split("<h1", 1)[1][:400]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))
    assert summary["nothing_compared"].startswith(": e judged no case")
    # (explain reads why from summary.json: a folder without its journal, as regress writes, too)
    (tmp_path / "out" / "cases.jsonl").unlink()
    assert "nothing was compared: e judged no case" in one_error(tokparity("explain", "out", cwd=tmp_path))


def test_an_engines_escape_sequences_never_reach_a_report(tmp_path, zoo):
    zoo("llama-spm")
    (tmp_path / "loud.py").write_text(
        "import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n"
        "    print(json.dumps({'id': r['id'], 'error': '\\x1b]0;owned\\x07\\x1b[2J\\u202ehi', 'status': 'error'}), flush=True)\n",
        "utf-8")
    done = tokparity("compare", "llama-spm", "-c", "edge", "-b", f"e=cmd:{sys.executable} loud.py", "-o", "out", "-q",
                     "--no-diagnose", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    with open(tmp_path / "out" / "mismatches.csv", newline="", encoding="utf-8") as f:
        evidence = next(r["evidence"] for r in csv.DictReader(f) if r["backend"] == "e")
    assert "<0x1B>" in evidence and "\x1b" not in evidence and "\u202e" not in evidence, evidence
    page = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert "\x1b" not in page and "\x07" not in page
