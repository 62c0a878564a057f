"""A fifteenth independent hostile campaign's finds (a helper told only docs/robustness.md's
promises): each failed before its fix. A user's own ``cases.jsonl`` in the ``-o`` folder was
replaced; a ``--known`` file or a journal of gigabytes was read whole (a MemoryError traceback); a
stop lost the cases a slow engine had answered. The engine folders a shell script enters with
``cd -P``, ``cd --`` or ``cd "$1"`` are in test_outputs_onto_found_files.py, the empty path options
in test_fourteenth_campaign.py, the journal keys in test_twelfth_campaign.py."""

from __future__ import annotations

import os
from pathlib import Path

from cli_runs import one_error, tokparity

ENGINES = Path(__file__).resolve().parents[2] / "examples" / "engines"


def test_a_users_own_cases_jsonl_is_not_replaced(tmp_path, zoo):
    zoo("llama-spm")
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "cases.jsonl").write_text('{"text": "my own data"}\n', "utf-8")
    line = one_error(tokparity("compare", "llama-spm", "-c", "one.txt", "-b", "ref", "-o", "mine", "-q", cwd=tmp_path))
    assert "mine/cases.jsonl: is not a tokparity journal" in line
    assert (mine / "cases.jsonl").read_text("utf-8") == '{"text": "my own data"}\n'
    again = tokparity("compare", "llama-spm", "-c", "one.txt", "-b", "ref", "-o", "fresh", "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr  # (a run's own journal is replaced by the next run, as before)
    assert tokparity("compare", "llama-spm", "-c", "one.txt", "-b", "ref", "-o", "fresh", "-q",
                     cwd=tmp_path).returncode == 0


def test_a_known_file_or_a_journal_of_gigabytes_is_one_line(tmp_path, zoo):
    zoo("llama-spm")
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    with open(tmp_path / "big.toml", "wb") as f:  # (sparse: no disk used)
        f.truncate(3 << 30)
    line = one_error(tokparity("compare", "llama-spm", "-c", "one.txt", "-b", "ref", "-o", "out", "--known",
                               "big.toml", "-q", cwd=tmp_path))
    assert "big.toml: 3,221,225,472 bytes, more than a known-divergences file can hold" in line
    (tmp_path / "j").mkdir()
    with open(tmp_path / "j" / "cases.jsonl", "wb") as f:
        f.truncate(5 << 30)
    line = one_error(tokparity("compare", "--resume", "j", cwd=tmp_path))
    assert "a first line of more than 64 MiB is not a tokparity journal's header" in line


def test_a_stop_keeps_the_cases_a_slow_engine_answered(tmp_path, zoo):
    """The journal took 64 cases at a time: Ctrl-C after 45 answers of an engine that takes 0.5 s a
    case kept none of them. A batch is now as large as half a second of judging."""
    import signal
    import subprocess
    import sys
    import time

    from cli_runs import ROOT

    zoo("llama-spm")
    (tmp_path / "c.txt").write_text("".join(f"hello {i}\n" for i in range(200)), "utf-8")
    counter = tmp_path / "answered"
    (tmp_path / "slow.py").write_text(
        "import json, sys, time\nn = 0\nfor line in sys.stdin:\n    time.sleep(0.3)\n    n += 1\n"
        f"    open({str(counter)!r}, 'w').write(str(n))\n"
        "    print(json.dumps({'id': json.loads(line)['id'], 'ids': [1]}), flush=True)\n", "utf-8")
    run = subprocess.Popen([sys.executable, "-P", "-m", "tokparity", "compare", "llama-spm", "-c", "c.txt", "-b",
                            f"cmd:{sys.executable} slow.py", "-o", "out", "-q"], cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    def answered() -> int:  # (the engine rewrites the file: it may be caught empty)
        text = counter.read_text() if counter.is_file() else ""
        return int(text) if text.strip() else 0

    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and answered() < 12:
            time.sleep(0.1)
        before = answered()
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=60) == 130, run.stderr.read() if run.stderr else ""
    finally:
        run.kill()
    records = len((tmp_path / "out" / "cases.jsonl").read_text("utf-8").splitlines()) - 1  # (less the header)
    assert before >= 12 and records >= before - 3, (records, before)
