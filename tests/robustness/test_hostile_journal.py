"""Hostile journals, output folders and resumes (issue 17, "data lost or wrong"): nothing a run
writes may destroy its input, no journal line is counted twice or for the wrong model, a folder
someone hands you does not run their commands, and every damaged or unwritable file is one line
on stderr with exit status 2, never a traceback.

Real runs on the zoo's llama-spm with the reference and a greedy engine that mismatches (15 of
the 21 cases of the corpus below), as subprocesses where the process matters (kills, limits,
environment) and through ``tokparity.cli.main`` for the matrix of damaged journals (fast)."""

from __future__ import annotations

import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from permissions import as_a_user

from tokparity.cli import main
from tokparity.run.journal import JOURNAL_FILE

KEY_FILE = "journal-key"  # in the cache folder (TOKPARITY_CACHE)

WORKTREE = Path(__file__).resolve().parents[2]
ENGINES = WORKTREE / "tests" / "engines"
EXAMPLES = WORKTREE / "examples" / "engines"
GREEDY = f"cmd:{sys.executable} {EXAMPLES / 'greedy_engine.py'} {{gguf}}"
CASES = 21


def tokparity(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 180,
              wrap=lambda argv: argv, **kw) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(WORKTREE), **(env or {})}
    return subprocess.run(wrap([sys.executable, "-m", "tokparity", *args]), capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=full_env, **kw)


def assert_one_line_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 2, one line on stderr (no traceback) holding ``words``."""
    err = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in err and len(err.splitlines()) == 1, err[-3000:]
    assert err.startswith("tokparity: error: "), err
    for word in words:
        assert word in err, (word, err)
    return err


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text("utf-8"))


def cases_of(out: Path) -> dict[tuple[str, str], int]:
    return {(r["model"], r["backend"]): r["cases"] for r in summary(out)["runs"]}


def records(out: Path) -> list[dict]:
    lines = (out / JOURNAL_FILE).read_bytes().split(b"\n")[1:-1]
    return [d for d in map(json.loads, lines) if "n" in d]


def cut_journal(out: Path, keep: int) -> None:
    """The journal of a run killed after ``keep`` cases (its header and first records)."""
    path = out / JOURNAL_FILE
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:1 + keep]) + b"\n")
    (out / "summary.json").unlink()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, zoo) -> Path:
    """21 cases of the edge corpus on which the greedy engine mismatches 15 times."""
    zoo("llama-spm")
    edge = (WORKTREE / "corpora" / "edge.jsonl").read_text("utf-8").splitlines(keepends=True)
    path = tmp_path_factory.mktemp("corpus") / "corp.jsonl"
    path.write_text("".join(edge[90:90 + CASES]), "utf-8")
    return path


@pytest.fixture(scope="module")
def finished(tmp_path_factory, corpus) -> Path:
    """A finished run (signed by this user's key): copied by the tests that damage it."""
    out = tmp_path_factory.mktemp("finished") / "out"
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-b", GREEDY, "-o", str(out), "-q")
    assert proc.returncode == 1, proc.stderr  # the greedy engine mismatches
    assert sum(1 for r in records(out) if r.get("mismatches")) == 15
    return out


def copy_run(finished: Path, tmp_path: Path, keep: int | None = None) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    if keep is not None:
        cut_journal(out, keep)
    return out


# -- 1. two models that share a name; the same model twice ---------------------------------------------

def test_two_models_sharing_a_name_resume_each_with_its_own_records(tmp_path, corpus, zoo):
    """a/m.gguf and b/m.gguf would both be "m" (they are named a/m and b/m): a resume must not give
    model 2 the records of model 1."""
    for folder, name in (("a", "llama-spm"), ("b", "llama-bpe")):
        (tmp_path / folder).mkdir()
        shutil.copy(zoo(name).files["gguf"], tmp_path / folder / "m.gguf")
    out = tmp_path / "out"
    args = ["compare", str(tmp_path / "a" / "m.gguf"), str(tmp_path / "b" / "m.gguf"), "-c", str(corpus), "-b", "ref",
            "-q"]
    proc = tokparity(*args, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    cut_journal(out, CASES + 5)  # model 1 whole, 5 cases of model 2
    proc = tokparity("compare", "--resume", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    runs = [(r["model"], r["backend"], r["cases"]) for r in summary(out)["runs"]]
    assert runs == [("a/m", "ref", CASES), ("b/m", "ref", CASES)], runs
    by_slot = [sorted(r["n"] for r in records(out) if r["slot"] == slot) for slot in (0, 1)]
    assert by_slot == [list(range(CASES))] * 2  # each model's cases once, each under its own key


def test_the_same_model_given_twice_is_judged_once_and_resumes_the_same(tmp_path, corpus):
    out = tmp_path / "out"
    proc = tokparity("compare", "llama-spm", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "llama-spm is given twice" in proc.stderr
    once = cases_of(out)
    assert len(summary(out)["runs"]) == len(once) == 2 and once["llama-spm", "ref"] == CASES  # one model's runs
    cut_journal(out, 10)
    proc = tokparity("compare", "--resume", str(out), "-q")  # it turned 21 cases into 42
    assert proc.returncode == 0, proc.stderr
    assert cases_of(out) == once and len(summary(out)["runs"]) == 2
    assert sorted(r["n"] for r in records(out)) == list(range(CASES))


# -- 2. an input that is a file the run writes -----------------------------------------------------------

@pytest.mark.parametrize("option,name", [("-c", JOURNAL_FILE), ("-c", "summary.json"), ("--known", "summary.md"),
                                         ("-c", "link-to-journal")])
def test_an_input_the_run_would_overwrite_is_refused(tmp_path, corpus, option, name):
    out = tmp_path / "D"
    out.mkdir()
    journal = out / JOURNAL_FILE
    shutil.copy(corpus, journal)
    for report in ("summary.json", "summary.md"):
        shutil.copy(corpus, out / report)
    given = out / name
    if name == "link-to-journal":
        given = tmp_path / "corp-link.jsonl"
        given.symlink_to(journal)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    extra = ["-c", str(corpus)] if option == "--known" else []
    proc = tokparity("compare", "llama-spm", option, str(given), *extra, "-b", "ref", "-o", str(out), "-q")
    assert_one_line_error(proc, str(given), "overwrite", "-o")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the corpus is still the corpus


def test_a_resume_whose_corpus_is_its_own_journal_is_refused(tmp_path, corpus):
    out = tmp_path / "D"
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(out), "-q")
    assert proc.returncode == 0
    header, *rest = (out / JOURNAL_FILE).read_bytes().split(b"\n")
    h = json.loads(header)
    h["args"]["corpora"] = [str(out / JOURNAL_FILE)]
    h["corpora"] = {}
    (out / JOURNAL_FILE).write_bytes(b"\n".join([json.dumps(h).encode(), *rest]))
    before = (out / JOURNAL_FILE).read_bytes()
    # An edited header is not signed any more; trusted, it still cannot make the run overwrite its journal.
    assert_one_line_error(tokparity("compare", "--resume", str(out), "--trust-journal", "-q"), "overwrite")
    assert (out / JOURNAL_FILE).read_bytes() == before


# -- 3. a line duplicated by hand ---------------------------------------------------------------------------

def test_a_duplicated_journal_line_is_counted_once(tmp_path, finished):
    out = copy_run(finished, tmp_path, keep=15)
    path = out / JOURNAL_FILE
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:4] + [lines[3]] + lines[4:]))  # case 2 twice
    proc = tokparity("compare", "--resume", str(out))
    assert proc.returncode == 1, proc.stderr
    assert "counted once" in proc.stderr
    assert cases_of(out) == cases_of(finished)
    assert summary(out)["runs"] == summary(finished)["runs"]


def test_a_journal_of_format_1_resumes_to_the_same_reports(tmp_path, finished):
    """A journal whose header says format 1 (which wrote every mismatch's backend ids and pieces),
    signed by this user and cut after 15 cases, resumes to the same reports."""
    from tokparity.run.journal.signing import SEAL, journal_key, sealed, signature
    from tokparity.run.results import json_text

    out = copy_run(finished, tmp_path, keep=15)
    path = out / JOURNAL_FILE
    key = journal_key(create=False)
    assert key is not None
    lines = path.read_bytes().split(b"\n")[:-1]
    header = json.loads(lines[0])
    assert header["journal"] == 2
    header["journal"] = 1
    header["signature"] = signature(key, header)
    written = [json.dumps(header).encode()]
    for raw in lines[1:]:
        d = json.loads(SEAL.fullmatch(raw)[1] + b"}")  # (the line without its seal)
        for m in d.get("mismatches", ()):
            m.setdefault("backend_ids", m["oracle_ids"])
            m.setdefault("backend_pieces", m["oracle_pieces"])
        written.append(sealed(key, header["signature"], json_text(d)).encode())
    path.write_bytes(b"\n".join(written) + b"\n")
    proc = tokparity("compare", "--resume", str(out), "-q")
    assert proc.returncode == 1, proc.stderr
    assert summary(out)["runs"] == summary(finished)["runs"]
    assert (out / "mismatches.csv").read_bytes() == (finished / "mismatches.csv").read_bytes()


# -- 4. a kill while the reports are written --------------------------------------------------------------

KILLED_WHILE = {
    "html": "import tokparity.report.html as m\n"
            "m.render = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n",
    "csv": "import tokparity.report.csv_report as m\n"
           "def half(mismatches, path):\n"
           "    with open(path, 'w') as f:\n"
           "        f.write('model,corpus,case_id\\nllama-spm,co'); f.flush()\n"
           "    os.kill(os.getpid(), signal.SIGKILL)\n"
           "m.write_csv = half\n",
}


@pytest.mark.parametrize("where", list(KILLED_WHILE))
def test_a_kill_while_writing_reports_never_leaves_complete_beside_cut_reports(tmp_path, corpus, where):
    out = tmp_path / "out"
    script = ("import os, signal, sys\n" + KILLED_WHILE[where] +
              "from tokparity.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", script, "compare", "llama-spm", "-c", str(corpus), "-b", "ref",
                           "-b", GREEDY, "-o", str(out), "-q"], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(WORKTREE)})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert not (out / "summary.json").exists()  # it said "complete": true before report.html was written
    if (out / "mismatches.csv").exists():  # renamed whole, or not there
        with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
            assert len(list(csv.reader(f))) == 16
    assert where != "csv" or not (out / "mismatches.csv").exists()
    # The journal has every case: a resume writes the reports.
    proc = tokparity("compare", "--resume", str(out), "-q")
    assert proc.returncode == 1, proc.stderr
    assert summary(out)["complete"] is True
    assert {p.name for p in out.iterdir()} == {JOURNAL_FILE, "summary.json", "summary.md", "report.html",
                                               "mismatches.csv"}


# -- 5. a journal this user's tokparity did not write --------------------------------------------------------

def test_a_resume_does_not_run_a_command_edited_into_the_header(tmp_path, finished):
    out = copy_run(finished, tmp_path, keep=10)
    pwned = tmp_path / "PWNED"
    header, *rest = (out / JOURNAL_FILE).read_bytes().split(b"\n")
    h = json.loads(header)
    h["args"]["backends"] = ["ref", f"cmd:touch {pwned}"]
    (out / JOURNAL_FILE).write_bytes(b"\n".join([json.dumps(h).encode(), *rest]))
    proc = tokparity("compare", "--resume", str(out), "-q")
    assert_one_line_error(proc, str(out / JOURNAL_FILE), f"cmd:touch {pwned}", "--trust-journal", "not written by")
    assert not pwned.exists()


def test_another_users_journal_needs_trust_journal_and_names_the_commands(tmp_path, corpus, zoo):
    gguf = str(zoo("llama-spm").files["gguf"])
    mine, theirs = {"TOKPARITY_CACHE": str(tmp_path / "mine")}, {"TOKPARITY_CACHE": str(tmp_path / "theirs")}
    out = tmp_path / "out"
    proc = tokparity("compare", gguf, "-c", str(corpus), "-b", "ref", "-b", GREEDY, "-o", str(out), "-q", env=theirs)
    assert proc.returncode == 1, proc.stderr
    key = tmp_path / "theirs" / KEY_FILE
    assert key.is_file() and (key.stat().st_mode & 0o777) == 0o600
    cut_journal(out, 10)
    proc = tokparity("compare", "--resume", str(out), "-q", env=mine)
    assert_one_line_error(proc, "--trust-journal", json.dumps(GREEDY))
    assert len(records(out)) == 10
    proc = tokparity("compare", "--resume", str(out), "--trust-journal", "-q", env=mine)
    assert proc.returncode == 1, proc.stderr
    assert summary(out)["complete"] is True and len(records(out)) == CASES
    cut_journal(out, 10)
    proc = tokparity("compare", "--resume", str(out), "-q", env=theirs)  # its own journal: as before
    assert proc.returncode == 1, proc.stderr


def test_fuzz_resume_of_another_users_journal_needs_trust_journal(tmp_path, zoo):
    gguf = str(zoo("llama-spm").files["gguf"])
    out = tmp_path / "fuzz"
    proc = tokparity("fuzz", gguf, "-b", GREEDY, "--seconds", "1", "--no-hypothesis", "-o", str(out), "-q",
                     env={"TOKPARITY_CACHE": str(tmp_path / "theirs")})
    assert proc.returncode in (0, 1), proc.stderr
    proc = tokparity("fuzz", "--resume", str(out), "-q", env={"TOKPARITY_CACHE": str(tmp_path / "mine")})
    assert_one_line_error(proc, "--trust-journal", json.dumps(GREEDY))


def _mismatching_line(out: Path) -> int:
    """The number of the first journal line whose record holds a mismatch."""
    lines = (out / JOURNAL_FILE).read_bytes().split(b"\n")
    return next(i for i, line in enumerate(lines[1:], 2) if line and json.loads(line).get("mismatches"))


def _agreeing(line: bytes) -> bytes:
    """A record line claiming that every backend agreed (the seal kept as it was)."""
    d = json.loads(line)
    d["verdicts"] = {name: "agree" for name in d["verdicts"]}
    d.pop("mismatches")
    return json.dumps(d).encode()


def test_a_verdict_edited_into_a_record_is_refused(tmp_path, finished):
    """A record edited to say "agree" would be counted as judged on resume: a ✅ no engine gave.
    Each line is sealed with the key; the edited one is named, nothing runs, nothing is lost."""
    out = copy_run(finished, tmp_path, keep=CASES - 3)
    path = out / JOURNAL_FILE
    lines = path.read_bytes().split(b"\n")
    edited = _mismatching_line(out)
    lines[edited - 1] = _agreeing(lines[edited - 1])
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    proc = tokparity("compare", "--resume", str(out), "-q")
    assert_one_line_error(proc, f"{path}:{edited}:", "not written by your tokparity", "--trust-journal")
    assert path.read_bytes() == before and not (out / "summary.json").exists()
    # Trusted, the edit is taken as it is: the user said so.
    proc = tokparity("compare", "--resume", str(out), "--trust-journal", "-q")
    assert proc.returncode == 1, proc.stderr
    assert sum(r["mismatches"] for r in summary(out)["runs"]) == sum(
        r["mismatches"] for r in summary(finished)["runs"]) - 1


def test_a_line_taken_from_another_journal_is_refused(tmp_path, finished, corpus):
    """A record sealed by this user's key, but for another run (the reference alone: all agree),
    does not check in this journal: a seal covers the header's signature too."""
    other = tmp_path / "other"
    assert tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(other), "-q").returncode == 0
    out = copy_run(finished, tmp_path, keep=CASES - 3)
    path = out / JOURNAL_FILE
    lines = path.read_bytes().split(b"\n")
    edited = _mismatching_line(out)
    n = json.loads(lines[edited - 1])["n"]
    theirs = next(line for line in (other / JOURNAL_FILE).read_bytes().split(b"\n")[1:] if json.loads(line)["n"] == n)
    lines[edited - 1] = theirs
    path.write_bytes(b"\n".join(lines))
    assert_one_line_error(tokparity("compare", "--resume", str(out), "-q"), f"{path}:{edited}:", "not written by")


def test_lines_of_a_run_with_the_same_arguments_are_refused(tmp_path, finished, corpus):
    """Two runs of the same arguments once had the same header, so each one's seals checked in the
    other's journal: an engine's good run could lend its lines to its bad one (an independent
    hostile campaign's find). Each header holds a random ``run`` under its signature."""
    again = tmp_path / "again"
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-b", GREEDY, "-o", str(again), "-q")
    assert proc.returncode == 1, proc.stderr
    mine = (again / JOURNAL_FILE).read_bytes().split(b"\n")
    theirs = (finished / JOURNAL_FILE).read_bytes().split(b"\n")
    assert json.loads(mine[0])["run"] != json.loads(theirs[0])["run"]
    (again / JOURNAL_FILE).write_bytes(b"\n".join(mine[:1] + theirs[1:CASES - 2]) + b"\n")
    (again / "summary.json").unlink()
    proc = tokparity("compare", "--resume", str(again), "-q")
    assert_one_line_error(proc, f"{again / JOURNAL_FILE}:2:", "not written by your tokparity")


def test_fingerprints_taken_out_of_the_header_are_refused(tmp_path, finished):
    """Without its fingerprints a resume could not see a changed corpus or model: the header's
    signature covers them."""
    out = copy_run(finished, tmp_path, keep=10)
    header, *rest = (out / JOURNAL_FILE).read_bytes().split(b"\n")
    h = json.loads(header)
    h["corpora"], h["models"] = {}, {}
    (out / JOURNAL_FILE).write_bytes(b"\n".join([json.dumps(h).encode(), *rest]))
    proc = tokparity("compare", "--resume", str(out), "-q")
    assert_one_line_error(proc, str(out / JOURNAL_FILE), "not written by your tokparity", "--trust-journal",
                          "count its records as judged")


def test_a_fuzz_note_edited_by_hand_is_refused(tmp_path, zoo):
    gguf = str(zoo("llama-spm").files["gguf"])
    out = tmp_path / "fuzz"
    proc = tokparity("fuzz", gguf, "-b", GREEDY, "--seconds", "1", "--no-hypothesis", "-o", str(out), "-q")
    assert proc.returncode in (0, 1), proc.stderr
    path = out / JOURNAL_FILE
    lines = path.read_bytes().split(b"\n")
    noted = next(i for i, line in enumerate(lines[1:], 2) if line and "note" in json.loads(line))
    d = json.loads(lines[noted - 1])
    d["note"]["elapsed"] = 0.5
    lines[noted - 1] = json.dumps(d).encode()
    path.write_bytes(b"\n".join(lines))
    proc = tokparity("fuzz", "--resume", str(out), "-q", timeout=60)
    assert_one_line_error(proc, f"{path}:{noted}:", "not written by your tokparity")


# -- 6. damaged journals -------------------------------------------------------------------------------------

def _record_line(d: dict) -> bytes:
    return json.dumps(d, ensure_ascii=False).encode()


def _edit_record(edit):
    """A damage of the first record with a mismatch (journal line ``line``)."""
    def damage(lines: list[bytes]) -> int:
        i = next(i for i, raw in enumerate(lines) if i and b'"mismatches"' in raw)
        d = json.loads(lines[i])
        result = edit(d)
        lines[i] = result if isinstance(result, bytes) else _record_line(d)
        return i + 1
    return damage


def _edit_header(edit):
    def damage(lines: list[bytes]) -> int:
        d = json.loads(lines[0])
        result = edit(d)
        lines[0] = result if isinstance(result, bytes) else json.dumps(d).encode()
        return 1
    return damage


def _raw(text: bytes, line: int = 2):
    def damage(lines: list[bytes]) -> int:
        lines[line - 1] = text
        return line
    return damage


def _mismatch(key, value=None, drop=False):
    def edit(d):
        m = d["mismatches"][0]
        if drop:
            del m[key]
        else:
            m[key] = value
    return edit


DAMAGED = {
    # the records
    "n a string": _edit_record(lambda d: d.update(n="3")),
    "n negative": _edit_record(lambda d: d.update(n=-1)),
    "n true": _edit_record(lambda d: d.update(n=True)),
    "n a float": _edit_record(lambda d: d.update(n=2.5)),
    "n NaN": _edit_record(lambda d: json.dumps(d).replace(f'"n": {d["n"]}', '"n": NaN').encode()),
    "n infinite": _edit_record(lambda d: json.dumps(d).replace(f'"n": {d["n"]}', '"n": 1e400').encode()),
    "n 5000 digits": _edit_record(lambda d: json.dumps(d).replace(f'"n": {d["n"]}', '"n": ' + "9" * 5000).encode()),
    "n 2**70": _edit_record(lambda d: d.update(n=2**70)),
    "no model": _edit_record(lambda d: d.pop("model")),
    "no n": _edit_record(lambda d: d.pop("n")),
    "no case_id": _edit_record(lambda d: d.pop("case_id")),
    "case_id a number": _edit_record(lambda d: d.update(case_id=5)),
    "case_id a lone surrogate": _edit_record(lambda d: json.dumps(d).replace(d["case_id"], "\\ud800").encode()),
    "record a list": _raw(b"[1, 2, 3]"),
    "record a string": _raw(b'"x"'),
    "record null": _raw(b"null"),
    "record not JSON": _raw(b'{"model": "llama-spm", "n": '),
    "record nested 100000 deep": _raw(b"[" * 100000 + b"]" * 100000),
    "verdicts a string": _edit_record(lambda d: d.update(verdicts="agree")),
    "verdict unknown word": _edit_record(lambda d: d["verdicts"].update(ref="maybe")),
    "verdict a short list": _edit_record(lambda d: d["verdicts"].update(ref=["crash"])),
    "verdict of a backend not run": _edit_record(lambda d: d["verdicts"].update(nosuch="agree")),
    "tally a string": _edit_record(lambda d: d.update(tally="kind=x")),
    "mismatches a string": _edit_record(lambda d: d.update(mismatches="x")),
    "mismatch ids a string": _edit_record(_mismatch("oracle_ids", "x")),
    "mismatch ids floats": _edit_record(_mismatch("backend_ids", [1.5])),
    "mismatch ids huge": _edit_record(_mismatch("backend_ids", [2**80])),
    "mismatch first_diff a string": _edit_record(_mismatch("first_diff", "0")),
    "mismatch unknown field": _edit_record(_mismatch("zzz", 1)),
    "mismatch without text": _edit_record(_mismatch("text", drop=True)),
    "mismatch tags a list": _edit_record(_mismatch("tags", [])),
    "mismatch a list": _edit_record(lambda d: d.update(mismatches=[[1]])),
    "too_long negative": _edit_record(lambda d: d.update(too_long=-4)),
    "slot a string": _edit_record(lambda d: d.update(slot="0")),
    # the header
    "header not an object": _edit_header(lambda d: b"[1, 2]"),
    "header not JSON": _edit_header(lambda d: b'{"journal": 1, "comm'),
    "header args a list": _edit_header(lambda d: d.update(args=[])),
    "header without args": _edit_header(lambda d: d.pop("args")),
    "header models a string": _edit_header(lambda d: d["args"].update(models="llama-spm")),
    "header max_chars a string": _edit_header(lambda d: d["args"].update(max_chars="3")),
    "header timeout negative": _edit_header(lambda d: d["args"].update(timeout=-1)),
    "header timeout NaN": _edit_header(lambda d: json.dumps(d).replace('"timeout": null', '"timeout": NaN').encode()),
    "header backends numbers": _edit_header(lambda d: d["args"].update(backends=[1])),
    "header add_special a string": _edit_header(lambda d: d["args"].update(add_special="yes")),
    "header corpora a list": _edit_header(lambda d: d.update(corpora=[])),
    "header corpus digest a number": _edit_header(lambda d: d.update(corpora={"x": 5})),
    "header command a number": _edit_header(lambda d: d.update(command=5)),
    "header format 3": _edit_header(lambda d: d.update(journal=3)),
    "header signature a number": _edit_header(lambda d: d.update(signature=5)),
    "header empty": _edit_header(lambda d: b""),
}


@pytest.mark.parametrize("kind", list(DAMAGED))
def test_a_damaged_journal_is_one_line_naming_its_line(tmp_path, finished, capsys, kind):
    out = copy_run(finished, tmp_path, keep=CASES - 3)
    path = out / JOURNAL_FILE
    lines = path.read_bytes().split(b"\n")[:-1]
    line = DAMAGED[kind](lines)
    path.write_bytes(b"\n".join(lines) + b"\n")
    before = path.read_bytes()
    status = main(["compare", "--resume", str(out), "-q"])
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("tokparity: error: "), err
    assert f"{path}:{line}:" in err, err
    assert path.read_bytes() == before  # nothing judged, nothing lost


def test_a_journal_cut_mid_line_resumes_cleanly(tmp_path, finished, capsys):
    out = copy_run(finished, tmp_path, keep=CASES - 3)
    path = out / JOURNAL_FILE
    path.write_bytes(path.read_bytes() + b'{"model": "llama-spm", "n": 18, "case_')
    assert main(["compare", "--resume", str(out), "-q"]) == 1
    assert summary(out)["runs"] == summary(finished)["runs"]


# -- 7. output that cannot be written --------------------------------------------------------------------------

def test_out_naming_a_file_is_one_line(tmp_path, corpus):
    target = tmp_path / "a-file"
    target.write_text("keep me")
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(target), "-q")
    assert_one_line_error(proc, str(target), "not a folder")
    assert target.read_text() == "keep me"


def test_journal_that_is_a_folder_is_one_line(tmp_path, corpus):
    (tmp_path / "out" / JOURNAL_FILE).mkdir(parents=True)
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(tmp_path / "out"), "-q")
    assert_one_line_error(proc, str(tmp_path / "out" / JOURNAL_FILE), "a folder")


def test_unwritable_out_is_one_line(tmp_path, corpus):
    # /proc refuses new folders even to root
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", "/proc/tokparity-out", "-q")
    assert_one_line_error(proc, "/proc/tokparity-out")
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o500)
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(out), "-q", wrap=as_a_user)
    assert_one_line_error(proc, str(out / JOURNAL_FILE), "cannot write")


def test_a_journal_linked_to_a_full_device_is_refused_before_writing(tmp_path, corpus):
    """A journal that is a link to /dev/full was written through and failed as a full disk; a link
    where the run writes its own file is now refused before anything is written (a write error on
    the journal itself: the file size limit below)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / JOURNAL_FILE).symlink_to("/dev/full")
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(out), "-q")
    assert_one_line_error(proc, str(out / JOURNAL_FILE), "symbolic link")


def _file_size_limit(limit: int):
    def limit_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return limit_files


def test_a_file_size_limit_on_the_journal_is_one_line_and_keeps_what_was_written(tmp_path, corpus, finished):
    out = tmp_path / "out"
    header = (finished / JOURNAL_FILE).read_bytes().split(b"\n")[0]
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-b", GREEDY, "-o", str(out), "-q",
                     preexec_fn=_file_size_limit(len(header) + 2000))
    err = assert_one_line_error(proc, str(out / JOURNAL_FILE), "cannot write the journal", "--resume")
    assert "File too large" in err
    proc = tokparity("compare", "--resume", str(out), "-q")  # the cases written are kept; the rest runs
    assert proc.returncode == 1, proc.stderr
    assert summary(out)["runs"] == summary(finished)["runs"]


def test_a_file_size_limit_on_the_reports_is_one_line_naming_the_report(tmp_path, corpus, finished):
    out = tmp_path / "out"
    journal = (finished / JOURNAL_FILE).stat().st_size
    biggest = max((finished / name).stat().st_size for name in ("report.html", "summary.json", "summary.md"))
    assert journal < biggest - 200, "the journal must fit under a limit the reports do not"
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-b", GREEDY, "-o", str(out), "-q",
                     preexec_fn=_file_size_limit(journal + 100))
    assert_one_line_error(proc, "cannot write the report", str(out))
    assert not (out / "summary.json").exists()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_tokparity_cache_naming_a_file_is_one_line(tmp_path, corpus):
    cache = tmp_path / "cache-file"
    cache.write_text("")
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(tmp_path / "out"), "-q",
                     env={"TOKPARITY_CACHE": str(cache)})
    assert_one_line_error(proc, f"TOKPARITY_CACHE={cache}", "not a folder")


# -- 8. a resume started in another folder ------------------------------------------------------------------

def test_resume_from_another_folder_with_a_relative_corpus(tmp_path, corpus, finished):
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    shutil.copy(corpus, here / "corp.jsonl")
    proc = tokparity("compare", "llama-spm", "-c", "corp.jsonl", "-b", "ref", "-b", GREEDY, "-o", "out", "-q",
                     cwd=here)
    assert proc.returncode == 1, proc.stderr
    cut_journal(here / "out", 10)
    proc = tokparity("compare", "--resume", str(here / "out"), "-q", cwd=elsewhere)
    assert proc.returncode == 1, proc.stderr
    assert cases_of(here / "out") == cases_of(finished)
    assert not (elsewhere / "out").exists()


# -- 6b. damaged fuzz journals (notes: the time used, findings) ------------------------------------------------

@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fuzzed") / "out"
    proc = tokparity("fuzz", "llama-spm", "-b", GREEDY, "--cases", "400", "--no-hypothesis", "-o", str(out), "-q")
    assert proc.returncode == 1, proc.stderr  # the greedy engine fails on whitespace runs
    return out


def _finding(lines: list[bytes]) -> dict:
    return next(d["note"] for d in map(json.loads, lines[1:]) if "finding" in d.get("note", {}))


def _bad_ids(lines: list[bytes]) -> dict:
    note = _finding(lines)
    note["finding"]["mismatch"]["oracle_ids"] = "x"
    return note


FUZZ_DAMAGED = {
    "elapsed a string": lambda lines: {"elapsed": "x"},
    "elapsed NaN": lambda lines: {"elapsed": float("nan")},
    "elapsed negative": lambda lines: {"elapsed": -5},
    "generators_end a string": lambda lines: {"generators_end": "5"},
    "finding empty": lambda lines: {"finding": {}},
    "finding ids a string": _bad_ids,
    "note a list": lambda lines: [1],
    # the counted cases of a fuzz journal (tokparity.fuzz.ledger): positions, outcomes, shapes
    "counted not an object": lambda lines: {"counted": [0, 5]},
    "counted backwards": lambda lines: {"counted": {"from": 9, "to": 3, "outcomes": "", "shapes": []}},
    "counted outcomes too short": lambda lines: {"counted": {"from": 0, "to": 3, "outcomes": "..", "shapes": []}},
    "counted outcome unknown": lambda lines: {"counted": {"from": 0, "to": 2, "outcomes": ".?", "shapes": []}},
    "counted shape counted too often": lambda lines: {"counted": {"from": 0, "to": 1, "outcomes": ".", "shapes": [
        {"model": "llama-spm", "n": 0, "case_id": "", "corpus": "gen:x", "verdicts": {}, "count": 5}]}},
    "counted shape verdict wrong": lambda lines: {"counted": {"from": 0, "to": 1, "outcomes": ".", "shapes": [
        {"model": "llama-spm", "n": 0, "case_id": "", "corpus": "gen:x", "verdicts": {"b": 3}, "count": 1}]}},
}


@pytest.mark.parametrize("kind", list(FUZZ_DAMAGED))
def test_a_damaged_fuzz_journal_is_one_line_naming_its_line(tmp_path, fuzzed, kind):
    out = tmp_path / "out"
    shutil.copytree(fuzzed, out)
    path = out / JOURNAL_FILE
    lines = path.read_bytes().split(b"\n")[:-1]
    lines.insert(2, json.dumps({"note": FUZZ_DAMAGED[kind](lines)}).encode())
    path.write_bytes(b"\n".join(lines) + b"\n")
    proc = tokparity("fuzz", "--resume", str(out), "-q", timeout=60)
    assert_one_line_error(proc, f"{path}:3:")


def test_an_id_beyond_32_bits_is_that_cases_failure_and_the_journal_resumes(tmp_path, corpus):
    """An engine answering ``[2**64]`` (#31): the id used to be accepted and journaled, and then the
    run's own journal was refused by --resume as "edited or damaged". Token ids are 32-bit: the case
    is an error of that engine, recorded in a form a resume reads back."""
    engine = tmp_path / "wild.py"
    engine.write_text("def encode(text, add_special=False, parse_special=False):\n"
                      "    return [2**64] if len(text) % 2 else [5]\n", "utf-8")
    out = tmp_path / "out"
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", f"wild=py:{engine}:encode", "-q",
                     "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    wild = [r for r in records(out) if r["verdicts"].get("wild") not in (None, "agree")]
    assert wild, "the engine answered 2**64 on some case"
    rows = list(csv.DictReader(open(out / "mismatches.csv", encoding="utf-8")))
    assert any("outside any vocabulary (token ids are 32-bit)" in r["evidence"] for r in rows)
    again = tokparity("compare", "--resume", str(out), "-q")
    assert again.returncode == 1, again.stderr
    assert "damaged" not in again.stderr and cases_of(out)[("llama-spm", "wild")] == CASES


def test_a_chat_id_beyond_32_bits_is_that_cases_failure_and_explain_reads_the_run(tmp_path, zoo):
    """A chat engine answering ``[2**64, 3]`` poisoned the journal, and ``explain`` refused the run
    (issue: hostile input, round 3; fixed for encode in #31). It is that conversation's failure now."""
    zoo("qwen3")
    engine = tmp_path / "wild_chat.py"
    engine.write_text("class Engine:\n"
                      "    def __init__(self, files):\n"
                      "        pass\n"
                      "    def encode(self, text, add_special=False, parse_special=False):\n"
                      "        return [5]\n"
                      "    def chat(self, messages, tools, options):\n"
                      "        return {'ids': [2**64, 3]}\n", "utf-8")
    out = tmp_path / "out"
    proc = tokparity("compare", "qwen3", "--ops", "chat", "-b", f"wild=py:{engine}:Engine", "-q", "-o", str(out),
                     timeout=300)
    assert proc.returncode == 1, proc.stderr
    rows = list(csv.DictReader(open(out / "mismatches.csv", encoding="utf-8")))
    assert rows and all("outside any vocabulary (token ids are 32-bit)" in r["evidence"] for r in rows
                        if r["backend"] == "wild")
    explained = tokparity("explain", str(out), timeout=120)
    assert explained.returncode in (0, 1) and "damaged" not in explained.stderr, explained.stderr


def test_a_journal_the_run_could_not_sign_says_its_resume_needs_trust(tmp_path, monkeypatch):
    """A cache folder the run cannot write: the journal of a run that names no command goes on
    unsigned. Its interruption said "continue with --resume DIR", which was then refused (a fifth
    independent campaign's find): it names --trust-journal now."""
    from tokparity.run.journal import Journal

    cache_file = tmp_path / "not-a-folder"
    cache_file.write_text("", "utf-8")
    monkeypatch.setenv("TOKPARITY_CACHE", str(cache_file / "cache"))
    unsigned = Journal.create(tmp_path / "a", "compare", {"models": ["m"], "backends": None})
    assert "signature" not in unsigned.header and unsigned.resume_flags == " --trust-journal"
    unsigned.close()
    monkeypatch.setenv("TOKPARITY_CACHE", str(tmp_path / "cache"))
    signed = Journal.create(tmp_path / "b", "compare", {"models": ["m"], "backends": None})
    assert "signature" in signed.header and signed.resume_flags == ""
    signed.close()
