"""Interrupted runs lose nothing: ``tokparity compare`` and ``fuzz`` run as real processes on a
zoo model with llama.cpp, the reference and a greedy engine that mismatches, killed with SIGKILL
or SIGINT halfway, then resumed; the resumed reports are those of an uninterrupted run."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from report_files import csv_rows, summary_without_timing

from tokparity.cli import main
from tokparity.run.journal import JOURNAL_FILE

ENGINES = Path(__file__).resolve().parents[1] / "engines"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "engines"  # the README's demo engines
GREEDY = f"cmd:{sys.executable} {EXAMPLES / 'greedy_engine.py'} {{gguf}}"
COMPARE = ["compare", "llama-spm", "-c", "edge", "-b", "ref", "-b", "llama.cpp", "-b", GREEDY, "-q"]
EDGE_CASES = 884


def tokparity(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tokparity", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def wait_for_lines(proc: subprocess.Popen, path: Path, n: int, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while lines(path) < n:
        assert proc.poll() is None, f"the run ended before its journal had {n} lines: {proc.communicate()}"
        assert time.monotonic() < deadline, f"{path} has {lines(path)} lines after {limit} s"
        time.sleep(0.02)


def journal(out: Path) -> list[dict]:
    """The journal's complete lines (split on newlines only: texts may hold U+2028 and the like)."""
    return [json.loads(x) for x in (out / JOURNAL_FILE).read_bytes().split(b"\n")[1:-1]]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, zoo):
    zoo("llama-spm")
    out = tmp_path_factory.mktemp("whole") / "out"
    proc = tokparity(*COMPARE, "-o", str(out))
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err  # the greedy engine mismatches
    return out


def test_sigkill_halfway_then_resume_gives_the_uninterrupted_reports(tmp_path, uninterrupted):
    out = tmp_path / "out"
    proc = tokparity(*COMPARE, "-o", str(out))
    wait_for_lines(proc, out / JOURNAL_FILE, EDGE_CASES // 2)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    # What the killed run left is readable: one JSON object per line, every case once; only the
    # last line may be cut short (a long mismatch record written in two pieces).
    raw = (out / JOURNAL_FILE).read_bytes().split(b"\n")
    records = [json.loads(x) for x in raw[1:-1]]
    assert [r["n"] for r in records] == list(range(len(records)))
    assert EDGE_CASES // 2 - 1 <= len(records) < EDGE_CASES
    assert not (out / "summary.json").exists()

    resumed = tokparity("compare", "--resume", str(out))
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 1, err
    assert f"{len(records):,} cases from {out / JOURNAL_FILE}, running the rest" in err
    assert summary_without_timing(out) == summary_without_timing(uninterrupted)
    assert csv_rows(out) == csv_rows(uninterrupted)
    # No case was run twice: the journal holds each position once.
    ns = [r["n"] for r in journal(out)]
    assert sorted(ns) == list(range(EDGE_CASES))


def test_sigint_writes_the_reports_of_the_cases_done_then_resume(tmp_path, uninterrupted):
    out = tmp_path / "out"
    proc = tokparity(*COMPARE, "-o", str(out))
    wait_for_lines(proc, out / JOURNAL_FILE, EDGE_CASES // 3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert f"continue with: tokparity compare --resume {out}" in err
    partial = summary_without_timing(out)
    assert partial["complete"] is False
    counted = {r["backend"]: r["cases"] for r in partial["runs"]}
    assert counted["ref"] == lines(out / JOURNAL_FILE) - 1  # the reports and the journal agree
    assert 0 < counted["ref"] < EDGE_CASES

    resumed = tokparity("compare", "--resume", str(out))
    resumed.communicate(timeout=300)
    assert resumed.returncode == 1
    assert summary_without_timing(out) == summary_without_timing(uninterrupted)
    assert csv_rows(out) == csv_rows(uninterrupted)


def test_a_line_cut_by_the_kill_is_run_again(tmp_path, uninterrupted):
    """A kill in the middle of a write leaves half a line: the resume drops it and redoes that case."""
    out = tmp_path / "out"
    out.mkdir()
    whole = [x + b"\n" for x in (uninterrupted / JOURNAL_FILE).read_bytes().split(b"\n")[:-1]]
    (out / JOURNAL_FILE).write_bytes(b"".join(whole[:301]) + whole[301][:57])
    assert main(["compare", "--resume", str(out), "-q"]) == 1
    assert summary_without_timing(out) == summary_without_timing(uninterrupted)
    assert lines(out / JOURNAL_FILE) == EDGE_CASES + 1


def test_resume_with_other_arguments_or_no_journal_is_a_clear_error(tmp_path, capsys, uninterrupted):
    assert main(["compare", "--resume", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"tokparity: error: {tmp_path / JOURNAL_FILE}: no journal to resume from; --resume takes the -o "
                   "folder of an earlier 'tokparity compare' run")
    assert main(["compare", "--resume", str(uninterrupted), "-c", "emoji"]) == 2
    err = capsys.readouterr().err.strip()
    assert "the compare run was started with corpora=['edge'], not ['emoji']" in err
    assert main(["fuzz", "--resume", str(uninterrupted)]) == 2
    err = capsys.readouterr().err.strip()
    assert (f"the journal of a 'compare' run, not 'fuzz'; resume it with "
            f"'tokparity compare --resume {uninterrupted}'") in err


def test_a_second_run_in_the_same_folder_is_refused(tmp_path, zoo):
    zoo("llama-spm")
    out = tmp_path / "out"
    proc = tokparity(*COMPARE, "-o", str(out))
    try:
        wait_for_lines(proc, out / JOURNAL_FILE, 50)
        proc.send_signal(signal.SIGSTOP)  # still writing this folder (the run is faster than a start-up)
        second = tokparity("compare", "--resume", str(out))
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2
        assert "another tokparity run is writing this folder" in err
    finally:
        proc.kill()
        proc.communicate()
    assert lines(out / JOURNAL_FILE) >= 51  # the first run's journal was not touched


def fuzz_positions(out: Path) -> list[int]:
    """Every case position a fuzz journal holds, as often as it holds it: its stored cases, and the
    positions its notes counted (a note's range covers the cases stored within it too)."""
    stored, counted = [], []
    for d in journal(out):
        if "n" in d:
            stored.append(d["n"])
        if "counted" in d.get("note", {}):
            counted.extend(range(d["note"]["counted"]["from"], d["note"]["counted"]["to"]))
    return counted + [n for n in stored if n not in set(counted)]


def wait_for_cases(proc: subprocess.Popen, out: Path, n: int, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while len(fuzz_positions(out)) < n if (out / JOURNAL_FILE).exists() else True:
        assert proc.poll() is None, f"the run ended before its journal had {n} cases: {proc.communicate()}"
        assert time.monotonic() < deadline, f"{out} has {len(fuzz_positions(out))} cases after {limit} s"
        time.sleep(0.1)


def test_fuzz_sigkill_then_resume_keeps_findings_and_runs_no_case_twice(tmp_path, zoo):
    zoo("llama-spm")
    out = tmp_path / "out"
    # (enough cases that a fast machine is still fuzzing when the kill comes)
    args = ["fuzz", "llama-spm", "-b", GREEDY, "--cases", "30000", "--seed", "5", "--no-hypothesis", "-q"]
    proc = tokparity(*args, "-o", str(out))
    wait_for_lines(proc, out / "fuzz-findings.jsonl", 1)
    wait_for_cases(proc, out, 300)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    findings = (out / "fuzz-findings.jsonl").read_text("utf-8").split("\n")[:-1]
    done = fuzz_positions(out)
    assert findings and len(done) == len(set(done)) >= 300

    resumed = tokparity("fuzz", "--resume", str(out))
    stdout, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 1, err
    # The journal may hold one finding more than the findings file: the kill can come between the two.
    read = re.search(r"(\d+) cases and (\d+) findings? from", err)
    assert read is not None and int(read.group(1)) == len(done) and int(read.group(2)) >= len(findings), err
    ns = fuzz_positions(out)
    assert len(ns) == len(set(ns)) > len(done)  # new cases, none of the old ones again
    result = json.loads((out / "summary.json").read_text("utf-8"))
    assert result["complete"] is True and result["options"]["fuzz"]["cases"] == len(ns)
    # One bug, one finding, however the interrupted run had named its first cases (the run settles
    # its findings at the end: one named after another reading is folded into the proven cause).
    before = [json.loads(f) for f in findings]
    after = result["options"]["fuzz"]["findings"]
    assert {f["cause"] for f in after} - {"model.viterbi-tie"} == {"model.greedy-longest-match"}
    assert {f["id"] for f in after} >= {f["id"] for f in before if f["cause"] == "model.greedy-longest-match"}
    assert [json.loads(x)["id"] for x in (out / "fuzz-findings.jsonl").read_text("utf-8").split("\n")[:-1]] == \
        [f["id"] for f in after]
