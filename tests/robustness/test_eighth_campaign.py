"""What an eighth hostile campaign broke (2026-11-29, a helper told only the promises of
docs/robustness.md), each as a user runs it:

- a corpus file that is a hard link to the journal key, found by a glob, put the key in every
  report: a hard-linked corpus file is refused in one line, as a model file is;
- an engine that skipped every case of one model of two was ✅: nothing was compared of that model;
- a reply with a byte-order mark (as .NET writes UTF-8) cost a timeout and a restart a case;
- an engine's error of 50 MB a case made 100 MB reports: it is cut to 2,000 characters;
- ``TOKPARITY_MAX_CRASHES=abc`` was a traceback: it is one line, exit 2;
- a long case that differs inside cost difflib minutes: past a bound it is one replace;
- ``convert -o config.json`` wrote over the config.json that ``check`` reads beside the tokenizer;
- ``explain`` of a run that compared nothing exited 0;
- ``fuzz --ops chat`` on a template that loops went on for its seconds, 400,000 rows of timeouts:
  it stops once the template is given up on, exit 2.
The rest are tested beside their code: ``check``'s malformed ``added_tokens_decoder`` and huge
``vocab_size`` (tests/checks/test_model_checks.py), ``encode --trace`` on a long text
(tests/reference/test_backend.py)."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

from cli_runs import one_error, tokparity

from tokparity.diff.align import align

ROOT = Path(__file__).resolve().parents[2]


def engine(tmp_path: Path, name: str, reply: str) -> str:
    """``-b`` for an engine whose reply to each request is ``reply`` (a Python expression of r)."""
    (tmp_path / name).write_text(f"import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n"
                                 f"    sys.stdout.write(({reply}) + '\\n'); sys.stdout.flush()\n", "utf-8")
    return f"e=cmd:{sys.executable} {tmp_path / name}"


def test_a_hard_linked_corpus_file_is_refused(tmp_path, zoo):
    zoo("llama-spm")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-KEY-123\n", "utf-8")
    (tmp_path / "c").mkdir()
    os.link(secret, tmp_path / "c" / "b.txt")
    (tmp_path / "c" / "a.txt").write_text("hello\n", "utf-8")
    line = one_error(tokparity("compare", "llama-spm", "-c", str(tmp_path / "c" / "*.txt"), "-b", "ref", "-o", "out",
                               "-q", cwd=tmp_path))
    assert "b.txt: is a hard link (2 names for one file)" in line
    written = [p for p in (tmp_path / "out").glob("*") if p.is_file()] if (tmp_path / "out").exists() else []
    assert not any("SECRET" in p.read_text("utf-8", "replace") for p in written)


def test_an_engine_that_skips_every_case_of_one_model_is_nothing_compared(tmp_path, zoo):
    zoo("llama-spm"), zoo("gpt-2")
    skips_gpt2 = engine(tmp_path, "skips.py", "json.dumps({'id': r['id'], 'error': 'not mine', 'status': 'skipped'}) "
                                              "if 'gpt' in sys.argv[1] else json.dumps({'id': r['id'], 'ids': [1]})")
    done = tokparity("compare", "llama-spm", "gpt-2", "-c", "edge", "-b", f"{skips_gpt2} {{name}}", "-o", "out", "-q",
                     "--no-diagnose", cwd=tmp_path)
    assert "nothing was compared of e on gpt-2: it judged no case of that model" in one_error(done)


def test_a_reply_with_a_byte_order_mark_is_read(tmp_path, zoo):
    zoo("llama-spm")
    bom = engine(tmp_path, "bom.py", "'\\ufeff' + json.dumps({'id': r['id'], 'ids': [1]})")
    done = tokparity("compare", "llama-spm", "-c", "edge", "-b", bom, "-o", "out", "-q", "--no-diagnose",
                     "--timeout", "60", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    with open(tmp_path / "out" / "mismatches.csv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["backend"] == "e"]
    assert rows and not any(r["class"] in ("timeout", "crash") for r in rows), {r["class"] for r in rows}


def test_an_engines_huge_error_is_cut(tmp_path, zoo):
    """Four cases of 5,000,000 characters each would make a 20 MB CSV; cut, it is a few kilobytes."""
    zoo("llama-spm")
    (tmp_path / "four.txt").write_text("one\ntwo\nthree\nfour\n", "utf-8")
    loud = engine(tmp_path, "loud.py", "json.dumps({'id': r['id'], 'error': 'x' * 5_000_000, 'status': 'error'})")
    done = tokparity("compare", "llama-spm", "-c", "four.txt", "-b", loud, "-o", "out", "-q", "--no-diagnose",
                     cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "out" / "mismatches.csv").stat().st_size < 100_000
    with open(tmp_path / "out" / "mismatches.csv", newline="", encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["backend"] == "e")
    assert row["evidence"].endswith("… (5,000,000 characters)") or "(5,000,000 characters)" in row["evidence"]


def test_a_max_crashes_that_is_no_number_is_one_line(tmp_path):
    line = one_error(tokparity("zoo", "list", cwd=tmp_path, env={"TOKPARITY_MAX_CRASHES": "abc"}))
    assert "TOKPARITY_MAX_CRASHES='abc': not a whole number of crashes" in line


def test_a_long_case_that_differs_inside_is_aligned_at_once():
    """30,000 ids with three changes far apart: one replace between the common head and tail."""
    a = [i % 251 for i in range(30_000)]
    b = list(a)
    b[100], b[29_000] = 7777, 8888
    b.insert(15_000, 5)
    d = align(a, b)
    assert (d.first, d.last) == ((100, 100), (29_001, 29_002))


def test_convert_never_writes_over_the_configuration_read_beside_the_tokenizer(tmp_path, zoo):
    """``check`` reads config.json and generation_config.json beside a tokenizer.json: they are its
    inputs, as tokenizer_config.json is convert's."""
    model = zoo("llama-bpe")
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(model.files["tokenizer_json"].read_bytes())
    for name in ("config.json", "generation_config.json"):
        (folder / name).write_text('{"vocab_size": 128256}', "utf-8")
        line = one_error(tokparity("convert", "m/tokenizer.json", "--to", "gguf", "-o", f"m/{name}", cwd=tmp_path))
        assert f"{name}: is the file it reads; name another file" in line
        assert (folder / name).read_text("utf-8") == '{"vocab_size": 128256}'


def test_explain_of_a_run_that_compared_nothing_exits_2(tmp_path, zoo):
    zoo("llama-spm")
    skips = engine(tmp_path, "skips.py", "json.dumps({'id': r['id'], 'error': 'not mine', 'status': 'skipped'})")
    one_error(tokparity("compare", "llama-spm", "-c", "edge", "-b", skips, "-o", "out", "-q", "--no-diagnose",
                        cwd=tmp_path))
    done = tokparity("explain", "out", cwd=tmp_path)
    assert "judged on no case: llama-spm/e" in done.stdout
    assert "Nothing compared: e judged no case (each skipped, or not applicable). No verdict." in " ".join(done.stdout.split())
    assert "agrees with its oracle" not in done.stdout  # (a write-up that says all agree would be a ✅ in words)
    assert "nothing was compared" in one_error(done)


def test_fuzzing_chats_stops_once_the_template_is_given_up_on(tmp_path, zoo):
    """A template that needs 3 GB on every render (a loop is the same, 10 s a render slower)."""
    model = zoo("qwen3")
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(model.files["tokenizer_json"].read_bytes())
    config = json.loads(model.files["tokenizer_config"].read_text("utf-8"))
    config["chat_template"] = "{{ 'x' * 3000000000 }}{% for m in messages %}{{ m.content }}{% endfor %}"
    (folder / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    done = tokparity("fuzz", "m", "--ops", "chat", "--seconds", "120", "-o", "out", "-q", cwd=tmp_path)
    line = one_error(done)
    assert "The chat template of m is given up on: the template needed more than 2 GiB of memory." in line
    with open(tmp_path / "out" / "mismatches.csv", newline="", encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) <= 10
    assert (tmp_path / "out" / "fuzz-findings.jsonl").is_file()
