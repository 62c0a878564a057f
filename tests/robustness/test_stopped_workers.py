"""``--jobs`` workers that stop or die (issue: hostile input, round 2): a SIGSTOPped worker hung the
run for ever, and a SIGKILLed one ended it saying "the cases judged so far are in the journal"
when the journal held only its header. A stopped worker now ends the run within seconds, in one
line, with no process left; a dead one says what the journal really holds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def workers_of(pid: int) -> list[int]:
    """The ``tokparity.run.parallel`` worker processes ``pid`` started."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(b")", 1)[1].split()[1]) == pid and b"tokparity.run.parallel" in cmdline:
            found.append(int(entry))
    return found


@pytest.mark.parametrize("sig", [signal.SIGSTOP, signal.SIGKILL])
def test_a_worker_stopped_or_killed_ends_the_run_in_one_line(tmp_path, zoo, sig):
    for model in ("llama-spm", "llama-bpe"):
        zoo(model)
    slow = tmp_path / "slow.py"  # (an engine that takes 10 ms a case: each worker is busy for seconds)
    slow.write_text("import json, sys, time\n"
                    "for line in sys.stdin:\n"
                    "    time.sleep(0.01)\n"
                    "    print(json.dumps({'id': json.loads(line)['id'], 'ids': [1]}), flush=True)\n", "utf-8")
    run = subprocess.Popen([sys.executable, "-m", "tokparity", "compare", "llama-spm", "llama-bpe", "-c", "edge",
                            "-b", f"slow=cmd:{sys.executable} {slow}", "--no-diagnose", "-j", "2", "-o", "out",
                            "-q"], cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(workers := workers_of(run.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert workers, "no worker started"
        time.sleep(2.0)  # (loading its model, then judging)
        os.kill(workers[0], sig)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 2, err[-2000:]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: compare --jobs: "), lines
    assert ("is stopped" if sig == signal.SIGSTOP else "died") in lines[0]
    journal_lines = (tmp_path / "out" / "cases.jsonl").read_text("utf-8").count("\n")
    if journal_lines <= 1:  # (only the header)
        assert "none of the cases judged had reached the journal yet" in lines[0]
    else:
        assert f"{journal_lines - 1} case records are in the journal" in lines[0]
    time.sleep(0.5)
    assert not [w for w in workers if Path(f"/proc/{w}").exists() and b"Z" not in
                Path(f"/proc/{w}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]]
