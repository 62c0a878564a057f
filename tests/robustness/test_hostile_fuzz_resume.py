"""``fuzz --resume`` on a journal with a line twice (issue: hostile input, round 2): a duplicated
``counted`` note counted its cases twice (6,903 became 12,211) and a duplicated finding was listed
twice. Each line now counts once: the resumed reports are those of the journal as written."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import cli_runs

ROOT = Path(__file__).resolve().parents[2]
GREEDY = f"greedy=cmd:{sys.executable} {ROOT / 'examples' / 'engines' / 'greedy_engine.py'} {{gguf}}"


def tokparity(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return cli_runs.tokparity(*args, "-q", cwd=cwd)


def fuzz_summary(folder: Path) -> tuple[int, list[str]]:
    fuzz = json.loads((folder / "summary.json").read_text("utf-8"))["options"]["fuzz"]
    return fuzz["cases"], sorted(f["id"] for f in fuzz["findings"])


def test_a_line_twice_in_a_fuzz_journal_counts_once(tmp_path, zoo):
    zoo("llama-spm")
    done = tokparity("fuzz", "llama-spm", "-b", GREEDY, "--cases", "1200", "-o", "run", cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    shutil.copytree(tmp_path / "run", tmp_path / "twice")
    lines = (tmp_path / "twice" / "cases.jsonl").read_text("utf-8").splitlines(keepends=True)
    notes = [line for line in lines if '"note"' in line]
    counted = next(line for line in notes if '"counted"' in line)
    finding = next(line for line in notes if '"finding"' in line)
    (tmp_path / "twice" / "cases.jsonl").write_text("".join(lines + [counted, finding]), "utf-8")
    for folder in ("run", "twice"):
        again = tokparity("fuzz", "--resume", folder, cwd=tmp_path)
        assert again.returncode == 1, again.stderr[-2000:]
    cases, findings = fuzz_summary(tmp_path / "run")
    assert cases > 1000 and findings and len(set(findings)) == len(findings)
    assert fuzz_summary(tmp_path / "twice") == (cases, findings)
