"""A seventeenth independent hostile campaign's finds (a helper told only docs/robustness.md's
promises; no severe break): each failed before its fix. A Ctrl-C soon after a SIGTERM, once the
clean-up was done, ended tokparity by SIGINT; the step summary made a file a corpus glob reads; a
goldens case named a ``cmd:`` engine as the maker of its ids."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time

from cli_runs import ROOT, one_error, tokparity


def test_a_ctrl_c_soon_after_a_sigterm_keeps_the_exit_status_of_the_sigterm(tmp_path, zoo):
    """The handlers were put back once the reports were written, within the 30 s a second signal is
    ignored: a Ctrl-C 0.2 s after the SIGTERM then ended tokparity by SIGINT (about one run in three)."""
    zoo("llama-spm")
    (tmp_path / "c.txt").write_text("".join(f"line {i} hello world\n" for i in range(40)), "utf-8")
    (tmp_path / "slow.py").write_text(
        "import json, sys, time\nfor line in sys.stdin:\n    time.sleep(0.25)\n"
        "    print(json.dumps({'id': json.loads(line)['id'], 'ids': [1]}), flush=True)\n", "utf-8")
    for n in range(6):
        run = subprocess.Popen([sys.executable, "-P", "-m", "tokparity", "compare", "llama-spm", "-c", "c.txt", "-b",
                                f"cmd:{sys.executable} slow.py", "-o", f"out{n}", "-q"], cwd=tmp_path,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (tmp_path / f"out{n}" / "cases.jsonl").is_file():
                time.sleep(0.05)
            time.sleep(1)
            run.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            run.send_signal(signal.SIGINT)
            assert run.wait(timeout=60) == 128 + signal.SIGTERM, n
        finally:
            run.kill()
        assert json.loads((tmp_path / f"out{n}" / "summary.json").read_text("utf-8"))["complete"] is False


def test_the_step_summary_never_makes_a_file_a_corpus_glob_reads(tmp_path, zoo):
    zoo("llama-spm")
    (tmp_path / "corp").mkdir()
    (tmp_path / "corp" / "a.txt").write_text("hello\n", "utf-8")
    for env, extra, named in (({"GITHUB_STEP_SUMMARY": "corp/zz.txt"}, [], "$GITHUB_STEP_SUMMARY corp/zz.txt"),
                              ({}, ["--junit", "corp/zz.txt"], "--junit corp/zz.txt")):
        line = one_error(tokparity("compare", "llama-spm", "-c", "corp/*.txt", "-b", "ref", "-o", "out", "-q", *extra,
                                   cwd=tmp_path, env=env))
        assert line.startswith(f"tokparity: error: {named}: is a file the corpus glob -c corp/*.txt stands for"), line
    assert not (tmp_path / "corp" / "zz.txt").exists()


def test_a_goldens_case_may_not_name_a_program_as_the_maker_of_its_ids(tmp_path, zoo):
    zoo("llama-spm")
    (tmp_path / "c.txt").write_text("hello world\nfoo bar\n", "utf-8")
    made = tokparity("regress", "--update", "llama-spm", "-c", "c.txt", "--goldens", "g", "-q", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    path = tmp_path / "g" / "llama-spm.jsonl.gz"
    lines = [json.loads(line) for line in gzip.open(path).read().decode().splitlines()]
    case = next(k for k, line in enumerate(lines) if "ids" in line)
    lines[case]["by"] = "cmd:python3 evil.py"
    with gzip.open(path, "wt") as f:
        f.write("\n".join(json.dumps(line) for line in lines) + "\n")
    line = one_error(tokparity("regress", "llama-spm", "-c", "c.txt", "--goldens", "g", "-o", "out", "-q", cwd=tmp_path))
    assert "names the backend 'cmd:python3 evil.py', which goldens may not name" in line
