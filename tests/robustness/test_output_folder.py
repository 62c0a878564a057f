"""The output folder is tokparity's, and only it (issue: hostile input, round 2): a symbolic link or a
folder where a run writes a file of its own, and ``--junit`` or ``$GITHUB_STEP_SUMMARY`` naming one
of the run's inputs or of its files, are one error line and exit 2 before anything is written; the
file the link points at, the input and the journal are left as they were. Each case here wrote
through the link or over the input (exit 0) before the check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cli_runs
import pytest

ROOT = Path(__file__).resolve().parents[2]


def tokparity(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return cli_runs.tokparity(*args, "-q", cwd=cwd, env=env)


@pytest.fixture
def folder(tmp_path: Path, zoo) -> Path:
    zoo("llama-spm")
    (tmp_path / "precious.txt").write_text("precious\n", "utf-8")
    (tmp_path / "texts.jsonl").write_text(json.dumps({"id": "a", "text": "hello world"}) + "\n", "utf-8")
    return tmp_path


def one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: ") and "Traceback" not in done.stderr, lines
    assert all(w in lines[0] for w in words), lines[0]


@pytest.mark.parametrize("name", ["cases.jsonl", "summary.json", "report.html", "mismatches.csv"])
def test_a_link_where_the_run_writes_is_refused_and_its_target_kept(folder, name):
    out = folder / "out"
    out.mkdir()
    (out / name).symlink_to(folder / "precious.txt")
    done = tokparity("compare", "llama-spm", "-c", "texts.jsonl", "-b", "ref", "-o", "out", cwd=folder)
    one_line(done, f"out/{name}", "symbolic link")
    assert (folder / "precious.txt").read_text("utf-8") == "precious\n"


def test_a_folder_where_the_run_writes_a_file_is_refused(folder):
    (folder / "out" / "summary.json").mkdir(parents=True)
    one_line(tokparity("compare", "llama-spm", "-c", "texts.jsonl", "-b", "ref", "-o", "out", cwd=folder),
             "summary.json", "a folder")
    assert not (folder / "out" / "cases.jsonl").exists()  # (refused before the journal is made)


def test_a_fuzz_findings_link_is_refused(folder):
    out = folder / "out"
    out.mkdir()
    (out / "fuzz-findings.jsonl").symlink_to(folder / "precious.txt")
    one_line(tokparity("fuzz", "llama-spm", "--seconds", "2", "-o", "out", cwd=folder), "fuzz-findings.jsonl")
    assert (folder / "precious.txt").read_text("utf-8") == "precious\n"


@pytest.mark.parametrize("target", ["texts.jsonl", "MODEL", "out/cases.jsonl"])
def test_junit_onto_an_input_or_the_journal_is_refused(folder, zoo, target):
    model = str(zoo("llama-spm").path("gguf"))
    junit = model if target == "MODEL" else target
    before = Path(folder / junit).read_bytes() if (folder / junit).exists() else None
    done = tokparity("compare", model, "-c", "texts.jsonl", "-b", "ref", "-o", "out", "--junit", junit, cwd=folder)
    one_line(done, "--junit", "name another file")
    if before is not None:
        assert Path(folder / junit).read_bytes() == before


def test_the_step_summary_onto_an_input_is_refused_and_a_resume_keeps_its_journal(folder):
    done = tokparity("compare", "llama-spm", "-c", "texts.jsonl", "-b", "ref", "-o", "out", cwd=folder)
    assert done.returncode == 0, done.stderr
    journal = (folder / "out" / "cases.jsonl").read_bytes()
    for target in ("texts.jsonl", "out/cases.jsonl"):
        done = tokparity("compare", "--resume", "out", cwd=folder, env={"GITHUB_STEP_SUMMARY": str(folder / target)})
        one_line(done, "$GITHUB_STEP_SUMMARY", "append the summary")
    assert (folder / "out" / "cases.jsonl").read_bytes() == journal
    assert (folder / "texts.jsonl").read_text("utf-8").count("\n") == 1


def test_a_second_run_into_the_folder_is_refused_while_the_first_writes_its_reports(folder, monkeypatch):
    """The journal's lock is held until the reports are written: a second run into the same folder
    at that moment (which truncated the finished run's journal and deleted its summary.json) is
    refused, and the first run's journal is whole."""
    import argparse

    from tokparity.commands import compare
    from tokparity.errors import TokparityError
    from tokparity.report import write_reports
    from tokparity.run.journal import Journal

    refused: list[str] = []

    def reports_with_a_second_writer(results, out):
        try:
            Journal.create(out, "compare", {})
        except TokparityError as e:
            refused.append(str(e))
        return write_reports(results, out)

    monkeypatch.setattr("tokparity.report.write_reports", reports_with_a_second_writer)
    monkeypatch.chdir(folder)
    parser = argparse.ArgumentParser()
    compare.add_parser(parser.add_subparsers())
    args = parser.parse_args(["compare", "llama-spm", "-c", "texts.jsonl", "-b", "ref", "-o", "out", "-q"])
    assert compare.run(args) == 0
    assert refused and "another tokparity run is writing this folder" in refused[0]
    lines = (folder / "out" / "cases.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["case_id"] == "a"


def test_one_goldens_writer_at_a_time_and_no_shared_temporary_file(tmp_path, zoo):
    """Two ``regress --update`` on the same goldens at once: the loser got a FileNotFoundError
    traceback (the temporary file had a fixed name) and the goldens ended a corrupt gzip. Now the
    second is refused in one line while the first holds the folder, and the file is written under
    a name of its own and renamed whole."""
    zoo("llama-spm")
    goldens = tmp_path / "goldens"
    env = {"PYTHONPATH": str(ROOT)}
    from tokparity.regress.goldens import one_writer

    with one_writer(goldens):
        done = tokparity("regress", "--update", "llama-spm", "-c", "edge", "--goldens", str(goldens), cwd=tmp_path,
                         env=env)
        one_line(done, str(goldens), "another 'tokparity regress --update' is writing these goldens")
    done = tokparity("regress", "--update", "llama-spm", "-c", "edge", "--goldens", str(goldens), cwd=tmp_path,
                     env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in goldens.iterdir()) == ["llama-spm.jsonl.gz"]  # (no temporary file left)
    import gzip
    with gzip.open(goldens / "llama-spm.jsonl.gz", "rt", encoding="utf-8") as f:
        assert json.loads(f.readline())["model"] == "llama-spm"


def test_a_built_in_corpus_named_like_the_folder_is_no_input_at_risk(folder):
    """``-c edge -o edge``: the corpus is tokparity's own, no file in the folder (it was refused as
    "the report folder")."""
    done = tokparity("compare", "llama-spm", "-c", "texts.jsonl", "-c", "edge", "-b", "ref", "-o", "edge",
                     cwd=folder)
    assert done.returncode in (0, 1), done.stderr
    assert (folder / "edge" / "summary.json").is_file()


def test_a_folder_deleted_mid_run_is_said(folder):
    """The output folder deleted while the run writes its journal: exit 0, the journal silently gone,
    before. Now the reports are written from what the run held and the run says, in one line and
    exit 2, that no --resume can continue it."""
    engine = folder / "deleter.py"
    engine.write_text(
        "import json, shutil, sys\n"
        "for n, line in enumerate(sys.stdin):\n"
        "    if n == 0:\n"
        "        shutil.rmtree(sys.argv[1], ignore_errors=True)\n"
        "    print(json.dumps({'id': json.loads(line)['id'], 'ids': [1]}), flush=True)\n", "utf-8")
    done = tokparity("compare", "llama-spm", "-c", "texts.jsonl", "-b", f"eng=cmd:{sys.executable} {engine} "
                     f"{folder / 'out'}", "-o", "out", cwd=folder)
    one_line(done, "out/cases.jsonl was deleted during the run", "no --resume can continue it")
    assert (folder / "out" / "summary.json").is_file() and not (folder / "out" / "cases.jsonl").exists()


def test_regress_update_never_writes_over_its_corpus(tmp_path, zoo):
    """``regress --update M -c G/M.jsonl.gz --goldens G`` wrote the goldens over the corpus it read
    (found by a hostile-input helper); it is one line now, the corpus as it was."""
    import gzip

    zoo("llama-spm")
    (tmp_path / "g").mkdir()
    corpus = tmp_path / "g" / "llama-spm.jsonl.gz"
    corpus.write_bytes(gzip.compress(b'{"id": "a", "text": "Hello"}\n'))
    before = corpus.read_bytes()
    one_line(tokparity("regress", "--update", "llama-spm", "-c", "g/llama-spm.jsonl.gz", "--goldens", "g", cwd=tmp_path),
             "is a goldens file of --goldens g", "copy the corpus elsewhere")
    assert corpus.read_bytes() == before


def test_a_report_folder_named_with_an_escape_sequence_is_spelled_out(folder):
    """``-o $'o\\e]0;PWN\\a\\e[2J'`` printed its escape sequences raw in the "reports:" line (a
    hostile-input helper's find): they are spelled out."""
    done = tokparity("compare", "llama-spm", "-c", "texts.jsonl", "-b", "ref", "-o", "o\x1b]0;PWN\x07\x1b[2Jx",
                     cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "reports: o<0x1B>]0;PWN<0x07><0x1B>[2Jx/report.html" in done.stdout


@pytest.mark.parametrize("command", ["compare", "regress"])
def test_the_step_summary_through_a_hard_link_into_the_cache_is_refused(folder, tmp_path, command):
    """``$GITHUB_STEP_SUMMARY`` is appended to, not replaced: through a hard link to the key that
    signs journals it grew the key (an independent hostile campaign's find; the cache check compared
    paths only). A file with more than one name is refused, whatever the other name is."""
    cache = tmp_path / "cache"
    cache.mkdir()
    key = cache / "journal-key"
    key.write_text("ab" * 32 + "\n", "utf-8")
    os.link(key, folder / "summary.md")
    env = {"TOKPARITY_CACHE": str(cache), "GITHUB_STEP_SUMMARY": str(folder / "summary.md")}
    args = ["compare", "llama-spm", "-c", "texts.jsonl", "-b", "ref"] if command == "compare" else ["regress", "llama-spm"]
    done = tokparity(*args, "-o", "out", cwd=folder, env=env)
    one_line(done, "$GITHUB_STEP_SUMMARY", "hard link", "name a file of its own")
    assert key.read_text("utf-8") == "ab" * 32 + "\n"


@pytest.mark.parametrize("where", ["--junit", "$GITHUB_STEP_SUMMARY"])
@pytest.mark.parametrize("kind", ["py", "cmd"])
def test_an_output_onto_the_engine_under_test_is_refused(folder, where, kind):
    """``--junit eng.py`` replaced the engine's own file with JUnit XML, and
    ``$GITHUB_STEP_SUMMARY`` appended Markdown to it (an independent hostile campaign's find): the
    engine's module, program and the files its command names are inputs of the run."""
    engine = folder / "eng.py"
    if kind == "py":
        engine.write_text("def encode(text, add_special, parse_special):\n    return [1]\n", "utf-8")
        spec = "py:eng.py:encode"
    else:
        engine.write_text("import json, sys\nfor line in sys.stdin:\n"
                          "    print(json.dumps({'id': json.loads(line)['id'], 'ids': [1]}), flush=True)\n", "utf-8")
        spec = f"cmd:{sys.executable} -P eng.py"
    before = engine.read_bytes()
    args = ["compare", "llama-spm", "-c", "texts.jsonl", "-b", spec, "-o", "out"]
    done = tokparity(*args, "--junit", "eng.py", cwd=folder) if where == "--junit" else \
        tokparity(*args, cwd=folder, env={"GITHUB_STEP_SUMMARY": str(engine)})
    one_line(done, where, "eng.py", "name another file")
    assert engine.read_bytes() == before
