"""``compare --jobs N`` gives the reports of ``--jobs 1``: the same summary.json (apart from the
timings), the same mismatches.csv rows in the same order, a journal that ``--resume`` continues,
with real backends (the reference, llama.cpp) and an engine that mismatches, crashes and hangs."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from report_files import csv_rows, summary_without_timing

from tokparity.cli import main
from tokparity.run.journal import JOURNAL_FILE

FLAKY = f"cmd:{sys.executable} {Path(__file__).parent / 'engines' / 'flaky_engine.py'}"
TEXTS = ["Hello world", "  two  spaces", "Grüße aus Köln", "日本語のテキスト", "emoji 🦙🤗", "HANG", "\ttab\nnewline",
         "don't I'LL", "1234567890", "SEGV", "Привет, мир!", "ok"] + ["Hello world", "ok", "x  y", "ÅÄÖ"] * 5
# (HANG and SEGV are never the first case of a shard: a timeout's evidence says whether the
# engine was still starting, and that depends on what the process ran before.)


def journal_lines(out: Path) -> list[bytes]:
    """The case records, each without its seal (a run's own: its header's random ``run`` is under it)."""
    return [re.sub(rb', "seal": "[0-9a-f]{32}"', b"", line)
            for line in (out / JOURNAL_FILE).read_bytes().split(b"\n")[1:-1]]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "texts.txt"
    path.write_text("\n".join(TEXTS) + "\n", "utf-8")
    return path


def compare(out: Path, corpus: Path, *args: str) -> int:
    return main(["compare", "-c", str(corpus), "-b", "ref", "-b", "llama.cpp", "-b", FLAKY, "-q", "-o", str(out),
                 "--timeout", "2", *args])


@pytest.fixture(scope="module")
def one_job(tmp_path_factory, zoo, corpus) -> Path:
    zoo("llama-spm")
    zoo("botchan-unigram")
    out = tmp_path_factory.mktemp("one") / "out"
    assert compare(out, corpus, "llama-spm", "botchan-unigram", "--jobs", "1") == 1  # the flaky engine mismatches
    return out


def test_two_jobs_give_the_reports_of_one(tmp_path, corpus, one_job):
    out = tmp_path / "out"
    assert compare(out, corpus, "llama-spm", "botchan-unigram", "--jobs", "2") == 1
    assert summary_without_timing(out) == summary_without_timing(one_job)
    assert csv_rows(out) == csv_rows(one_job)
    classes = {row[6] for row in csv_rows(out)[1:]}
    assert {"crash", "timeout"} <= classes  # SEGV and HANG, recorded per case as with one job
    assert sorted(journal_lines(out)) == sorted(journal_lines(one_job))
    timing = json.loads((out / "summary.json").read_text("utf-8"))["timing"]
    assert timing["jobs"] == 2
    assert set(timing["models"]) == {"llama-spm", "botchan-unigram"}
    spent = timing["models"]["llama-spm"]["backends"]
    assert set(spent) == {"golden", "ref", "llama.cpp", FLAKY}
    assert spent[FLAKY] >= 2.0  # its HANG case alone waited the 2 s timeout (ref's 28 cases can round to 0.0)


def test_more_models_than_jobs(tmp_path, corpus, zoo):
    """Three models on two workers: the one left without a task is stopped while the other
    finishes (and leaves without the interpreter's teardown); nothing of it is lost."""
    zoo("bert-bge")
    models = ("llama-spm", "botchan-unigram", "bert-bge")
    one, two = tmp_path / "one", tmp_path / "two"
    assert compare(one, corpus, *models, "--jobs", "1") == 1
    assert compare(two, corpus, *models, "--jobs", "2") == 1
    assert summary_without_timing(two) == summary_without_timing(one)
    assert csv_rows(two) == csv_rows(one)
    runs = summary_without_timing(two)["runs"]
    assert list(dict.fromkeys(r["model"] for r in runs)) == list(models)  # in command-line order


def test_one_model_is_split_into_shards_of_cases(tmp_path, corpus, one_job):
    single = tmp_path / "single"
    assert compare(single, corpus, "botchan-unigram", "--jobs", "1") == 1
    sharded = tmp_path / "sharded"
    assert compare(sharded, corpus, "botchan-unigram", "--jobs", "2") == 1
    assert summary_without_timing(sharded) == summary_without_timing(single)
    assert csv_rows(sharded) == csv_rows(single)
    cases = len(journal_lines(single))
    assert cases == len(TEXTS) + 1  # one line per case ("\ttab\nnewline" is two)
    assert [json.loads(x)["n"] for x in journal_lines(sharded)] == list(range(cases))  # counted in order


def test_resume_with_two_jobs(tmp_path, one_job):
    """An interrupted run's journal (the header and the first 20 cases, HANG and SEGV among them)
    continued with --jobs 2: the reports of the uninterrupted run."""
    out = tmp_path / "out"
    out.mkdir()
    whole = (one_job / JOURNAL_FILE).read_bytes().split(b"\n")
    (out / JOURNAL_FILE).write_bytes(b"\n".join(whole[:21]) + b"\n")
    assert main(["compare", "--resume", str(out), "--jobs", "2", "-q"]) == 1
    assert summary_without_timing(out) == summary_without_timing(one_job)
    assert csv_rows(out) == csv_rows(one_job)
    ns = sorted((json.loads(x)["model"], json.loads(x)["n"]) for x in journal_lines(out))
    assert ns == sorted((m, n) for m in ("llama-spm", "botchan-unigram") for n in range(len(TEXTS) + 1))


def test_bad_jobs_timeout_and_model_are_clear_errors(tmp_path, capsys, corpus, zoo):
    assert main(["compare", "llama-spm", "--jobs", "-1", "-o", str(tmp_path / "a")]) == 2
    assert capsys.readouterr().err.strip() == "tokparity: error: --jobs must be 0 (one per CPU) or more, not -1"
    assert main(["compare", "llama-spm", "--timeout", "0", "-o", str(tmp_path / "a")]) == 2
    assert capsys.readouterr().err.strip() == ("tokparity: error: argument --timeout: must be a number of seconds above 0 "
                                               "and at most 86400 (a day), not 0 (see `tokparity compare --help`)")
    zoo("llama-spm")
    missing = tmp_path / "missing.gguf"
    assert compare(tmp_path / "b", corpus, "llama-spm", str(missing), "--jobs", "2") == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("tokparity: error: ") and str(missing) in err


def test_a_bad_corpus_line_with_two_jobs_keeps_the_cases_before_it(tmp_path, capsys, zoo):
    zoo("llama-spm")
    corpus = tmp_path / "bad.jsonl"
    corpus.write_bytes(b'{"id": "a", "text": "fine"}\n{"id": "b", "text": "caf\xe9 \xff"}\n')
    status = main(["compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(tmp_path / "out"), "-q",
                   "--jobs", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and f"{corpus}:2: invalid UTF-8" in err[0]
    assert [json.loads(x)["case_id"] for x in journal_lines(tmp_path / "out")] == ["a"]
