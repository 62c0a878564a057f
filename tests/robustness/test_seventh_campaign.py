"""What a seventh hostile campaign broke (2026-11-29, a helper told only the promises of
docs/robustness.md), each as a user runs it:

- a chat engine's refusal that holds ESC and BEL reached ``mismatches.csv`` and ``report.html``
  raw in the evidence: a terminal that shows the file runs them; they are spelt out now;
- a chat engine's ids had no bound: 2,000,000 ids an answer made 725 MB of ``mismatches.csv``. An
  answer of more ids than any tokenizer gives for the prompt is the case's failure now, as on encode;
- a folder or a FIFO named ``config.json`` was skipped silently by ``tokparity check``;
- a reply nested 100,000 deep was waited on to its timeout: it is the case's error at once."""

from __future__ import annotations

import csv
import os
from pathlib import Path

from cli_runs import tokparity

ROOT = Path(__file__).resolve().parents[2]
REFUSAL = "\x1b]0;PWNED\x07\x1b[2J<script>alert(1)</script>\n# x"
REFUSES = ("import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n"
           f"    print(json.dumps({{'id': r['id'], 'raised': {REFUSAL!r}}}), flush=True)\n")


MANY_IDS = ("import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n"
            "    print(json.dumps({'id': r['id'], 'ids': [100] * 300000}), flush=True)\n")


def rows_of_engine(tmp_path: Path, script: str, *run: str) -> list[dict]:
    """The rows of mismatches.csv of an engine (``script``, run as ``e``) after ``compare *run``,
    which must exit 1."""
    (tmp_path / "engine.py").write_text(script, "utf-8")
    done = tokparity("compare", *run, "-b", "e=cmd:{python} engine.py", "-o", "out", "-q", "--no-diagnose",
                     cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    with open(tmp_path / "out" / "mismatches.csv", newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r["backend"] == "e"]


def test_a_chat_refusal_with_escape_sequences_is_spelt_out(tmp_path, zoo):
    zoo("qwen3")
    rows = rows_of_engine(tmp_path, REFUSES, "qwen3", "--ops", "chat")
    assert rows and all("refused the conversation" in r["evidence"] for r in rows)
    for name in ("mismatches.csv", "report.html", "summary.md"):
        written = (tmp_path / "out" / name).read_text("utf-8")
        assert "\x1b" not in written and "\x07" not in written, name


def test_a_chat_engine_giving_more_ids_than_any_tokenizer_is_a_failed_case(tmp_path, zoo):
    zoo("qwen3")
    rows = rows_of_engine(tmp_path, MANY_IDS, "qwen3", "--ops", "chat")
    assert (tmp_path / "out" / "mismatches.csv").stat().st_size < 5_000_000
    assert rows and all(r["class"] == "crash" and "300,000 ids for a text of" in r["evidence"] for r in rows), rows[0]


def test_a_folder_or_a_fifo_named_as_a_configuration_is_one_line(tmp_path, zoo):
    """They were skipped silently: the check read no end and no size from them."""
    model = tmp_path / "m"
    model.mkdir()
    for name, role in (("tokenizer.json", "tokenizer_json"), ("tokenizer_config.json", "tokenizer_config")):
        (model / name).write_bytes(zoo("llama-bpe").files[role].read_bytes())
    for name, make in (("config.json", lambda p: p.mkdir()), ("generation_config.json", os.mkfifo)):
        path = model / name
        make(path)
        done = tokparity("check", str(model), cwd=tmp_path)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert lines[0] == f"tokparity: error: {path}: not a regular file; a model file must be one", done.stderr
        path.rmdir() if path.is_dir() else path.unlink()


def test_a_reply_nested_too_deeply_is_the_cases_error_at_once(tmp_path, zoo):
    zoo("llama-spm")
    deep = ("import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n"
            "    print('{\"id\": %d, \"ids\": ' % r['id'] + '[' * 100000 + ']' * 100000 + '}', flush=True)\n")
    rows = rows_of_engine(tmp_path, deep, "llama-spm", "-c", "edge", "--timeout", "60")
    assert rows and all(r["class"] == "crash" and "its reply cannot be read (nested too deeply)" in r["evidence"]
                        for r in rows), rows[0]["class"] + rows[0]["evidence"]
