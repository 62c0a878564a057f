"""Hostile corpora, goldens, report text and arguments (issue 17): a huge line under --max-chars,
a gzip bomb of goldens, corpus lines Python's JSON reader cannot take (a 5000-digit integer,
200k-deep nesting, a lone surrogate), corpora that are folders, unreadable, carry a BOM or have a
file name that is not UTF-8, a CR in a case id or an engine's error, and numbers such as
``--seconds nan``. Each gives one line naming the file (and line) or argument, exit 2, or a
defined behaviour; never a traceback, a hang or gigabytes of memory.

The end-to-end tests drive the real CLI in a child process (the tokparity of this checkout) and
measure its peak memory through a small wrapper process, whose only child it is.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from permissions import as_a_user

from tokparity.commands.arguments import (
    checked,
    non_negative_int,
    non_negative_seconds,
    positive_int,
    positive_seconds,
)
from tokparity.errors import TokparityError

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ROOT / "tests" / "engines"
EXAMPLES = ROOT / "examples" / "engines"
GREEDY = f"cmd:{sys.executable} {EXAMPLES / 'greedy_engine.py'} {{gguf}}"
MB = 1 << 20

# Runs its arguments as a child and prints the child's peak resident set (KiB on Linux) on its
# last stderr line: RUSAGE_CHILDREN of a fresh process covers that one child only.
MEASURE = ("import resource, subprocess, sys\n"
           "r = subprocess.run(sys.argv[1:])\n"
           "print('peak-kib', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
           "sys.exit(r.returncode)\n")


def env() -> dict[str, str]:
    e = dict(os.environ, PYTHONPATH=str(ROOT))
    e.pop("PYTHONIOENCODING", None)
    return e


def tokparity(*args: str | bytes, cwd: Path | None = None, timeout: float = 120,
              wrap=lambda argv: argv) -> subprocess.CompletedProcess:
    return subprocess.run(wrap([sys.executable, "-m", "tokparity", *args]), capture_output=True, text=True, env=env(),
                          cwd=cwd, timeout=timeout, errors="backslashreplace")  # (file names not UTF-8: printed)


def measured(*args: str, timeout: float = 120) -> tuple[subprocess.CompletedProcess, int]:
    """``tokparity ARGS`` and its peak memory in MiB."""
    proc = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "tokparity", *args],
                          capture_output=True, text=True, env=env(), timeout=timeout)
    *rest, last = proc.stderr.rstrip("\n").split("\n")
    assert last.startswith("peak-kib "), proc.stderr
    proc.stderr = "\n".join(rest)
    return proc, int(last.split()[1]) // 1024


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    """The run's stderr: exactly one line, ``tokparity: error: …``, no traceback."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: "), proc.stderr
    return lines[0]


def jsonl(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), "utf-8")
    return path


def journal_cases(out: Path) -> list[dict]:
    lines = (out / "cases.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


GOOD = '{"id": "first", "text": "hello world"}'


# -- 1. --max-chars bounds what is read -------------------------------------------------------


def test_a_line_longer_than_max_chars_allows_is_skipped_unread(tmp_path, zoo):
    zoo("llama-spm")
    corpus = tmp_path / "big.jsonl"
    with open(corpus, "wb") as f:  # a valid record on a 200 MB line
        f.write(GOOD.encode() + b"\n")
        start = f.tell()
        f.write(b'{"id": "big", "text": "')
        for _ in range(200):
            f.write(b"a" * 1_000_000)
        f.write(b'"}\n')
        line_bytes = f.tell() - start
        f.write(b'{"id": "last", "text": "world"}\n')
    out = tmp_path / "out"
    proc, peak = measured("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "--max-chars", "1000",
                          "-o", str(out), "-q")
    assert peak < 300, f"peak memory {peak} MiB: the long line was read"
    assert proc.returncode == 0, proc.stderr
    skipped = json.loads((out / "summary.json").read_text("utf-8"))["options"]["too_long"]
    assert skipped["cases"] == 1 and skipped["max_chars"] == 1000
    assert skipped["first"] == [{"model": "llama-spm", "corpus": "big", "case_id": "big-2",
                                 "line_bytes": line_bytes}]
    records = journal_cases(out)
    assert [r["case_id"] for r in records] == ["first", "big-2", "last"]
    assert records[1]["unread"] is True and "verdicts" not in records[1]
    assert all(r["verdicts"] == {"ref": "agree"} for r in (records[0], records[2]))
    # the note a run prints for it (here: -q) is in a resumed run's reports as well
    again = tokparity("compare", "--resume", str(out), "-q")
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "summary.json").read_text("utf-8"))["options"]["too_long"] == skipped


def test_a_zstd_bomb_line_is_read_in_linear_time(tmp_path):
    """A 30 KB .jsonl.zst holding one 256 MiB line (#31): every 64 KiB read used to copy all that a
    16 KiB chunk expanded to (`self._out = self._out[n:]`), 150 s and more; read from an offset it
    is skipped unread within seconds, the cases around it kept."""
    import time

    zstandard = pytest.importorskip("zstandard")
    from tokparity.corpus import load_corpus

    corpus = tmp_path / "bomb.jsonl.zst"
    with open(corpus, "wb") as raw, zstandard.ZstdCompressor(level=19).stream_writer(raw) as z:
        z.write(b'{"id": "first", "text": "hello"}\n{"id": "big", "text": "')
        for _ in range(256):
            z.write(b"a" * (1 << 20))
        z.write(b'"}\n{"id": "last", "text": "world"}\n')
    assert corpus.stat().st_size < 100_000
    started = time.perf_counter()
    cases = list(load_corpus(str(corpus), max_chars=1000))
    seconds = time.perf_counter() - started
    assert [c.id for c in cases] == ["first", "bomb-2", "last"] and [c.text for c in (cases[0], cases[2])] == [
        "hello", "world"]
    assert seconds < 30, f"{seconds:.0f} s: the reader copies what it holds on every read again"


def test_the_byte_cap_never_skips_a_text_within_max_chars(tmp_path):
    """12 bytes a character: a text of astral characters written as escapes is still read."""
    from tokparity.corpus import load_corpus

    text = "😀" * 100
    escaped = json.dumps({"id": "e", "text": text})  # ensure_ascii: \ud83d\ude00 per character
    assert len(escaped) > 1000
    path = jsonl(tmp_path / "astral.jsonl", escaped)
    (case,) = load_corpus(str(path), max_chars=100)
    assert case.text == text and not case.unread_bytes
    txt = tmp_path / "astral.txt"
    txt.write_text(text + "\r\n" + "x" * 403 + "\n", "utf-8")  # 4 bytes a character and the \r\n: 402 at most
    first, second = load_corpus(str(txt), max_chars=100)
    assert first.text == text and second.unread_bytes == 404


# -- 2. goldens that expand without end -------------------------------------------------------


def goldens_header() -> bytes:
    return json.dumps({"goldens": 1, "model": "llama-spm", "tokparity": "0.1.0", "parse_special": False,
                       "oracles": {"plain": ["llama.cpp"], "add_special": ["llama.cpp"]}, "versions": {},
                       "files": {}, "wrap": [[1], []]}).encode() + b"\n"


def test_a_goldens_gzip_bomb_stops_early_with_one_line(tmp_path):
    gold = tmp_path / "gold"
    gold.mkdir()
    bomb = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip framing
    with open(gold / "llama-spm.jsonl.gz", "wb") as f:
        f.write(bomb.compress(goldens_header()))
        for _ in range(200):
            f.write(bomb.compress(b" " * MB))  # one 200 MB line of spaces, 200 KB on disk
        f.write(bomb.compress(b"\n") + bomb.flush())
    assert (gold / "llama-spm.jsonl.gz").stat().st_size < 2 * MB
    proc, peak = measured("regress", "llama-spm", "--goldens", str(gold))
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert "llama-spm.jsonl.gz: a line expands to more than 64 MiB" in line and "regress --update" in line
    assert peak < 300, f"peak memory {peak} MiB: the bomb was expanded"


def test_goldens_stop_at_the_total_bound(tmp_path, monkeypatch):
    from tokparity.errors import BadGoldens
    from tokparity.regress import goldens

    path = tmp_path / "m.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(goldens_header() + b'{"corpus": "c", "cases": 0, "texts_sha256": "", "ids_sha256": "", '
                                   b'"per_case": true}\n' * 50)
    monkeypatch.setattr(goldens, "MAX_TOTAL_BYTES", 1000)
    with pytest.raises(BadGoldens, match=r"m\.jsonl\.gz: expands to more than"):
        goldens.read_goldens(path)


@pytest.mark.parametrize("damage", ["a list", "deep nesting", "corrupt deflate"])
def test_damaged_goldens_are_one_line(tmp_path, damage):
    from tokparity.errors import BadGoldens
    from tokparity.regress.goldens import read_goldens

    path = tmp_path / "m.jsonl.gz"
    if damage == "corrupt deflate":
        good = gzip.compress(goldens_header() * 20)
        path.write_bytes(good[:20] + bytes(b ^ 0x55 for b in good[20:-8]) + good[-8:])
    else:
        body = b"[1, 2]\n" if damage == "a list" else goldens_header() + b"[" * 200_000 + b"]" * 200_000 + b"\n"
        path.write_bytes(gzip.compress(body))
    with pytest.raises(BadGoldens, match=r"m\.jsonl\.gz(:\d+)?: damaged goldens"):
        read_goldens(path)


# -- 3. corpus lines and files Python's readers refuse ------------------------------------------


@pytest.mark.parametrize("line, words", [
    ('{"id": "n", "text": "x", "n": ' + "1" * 5000 + "}", "a number too long to read"),
    ('{"id": "deep", "text": "x", "t": ' + "[" * 200_000 + "]" * 200_000 + "}", "JSON nested too deeply to read"),
    ('{"id": "s", "text": "a\\ud800b"}', "the record's 'text' holds a lone surrogate (\\ud800)"),
    ('{"id": "s\\udfff", "text": "ab"}', "the record's 'id' holds a lone surrogate (\\udfff)"),
    ('{"id": "s", "text": "ab", "tags": {"k": "\\ud83d"}}', "the record's 'tags' holds a lone surrogate (\\ud83d)"),
], ids=["long-number", "deep-nesting", "surrogate-text", "surrogate-id", "surrogate-tags"])
# (named ids: a test's id reaches its children's environment, PYTEST_CURRENT_TEST, and a 400,000-character
# one is more than Linux lets a process start with)
def test_a_corpus_line_python_cannot_take_is_one_line_and_the_cases_before_it_are_kept(tmp_path, zoo, line, words):
    zoo("llama-spm")
    corpus = jsonl(tmp_path / "bad.jsonl", GOOD, line, '{"id": "never", "text": "z"}')
    out = tmp_path / "out"
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(out), "-q")
    assert proc.returncode == 2
    message = one_error_line(proc)
    assert f"bad.jsonl:2: {words}" in message, message
    assert [r["case_id"] for r in journal_cases(out)] == ["first"]  # judged before the bad line: kept


def test_a_pair_of_surrogate_escapes_is_a_character_not_an_error(tmp_path):
    from tokparity.corpus import load_corpus

    path = jsonl(tmp_path / "ok.jsonl", '{"id": "\\ud83d\\ude00", "text": "\\\\ud800 is text here: \\ud83d\\ude00"}')
    (case,) = load_corpus(str(path))
    assert case.id == "😀" and case.text == "\\ud800 is text here: 😀"


def test_a_corpus_with_a_byte_order_mark_is_read(tmp_path, zoo):
    zoo("llama-spm")
    corpus = tmp_path / "bom.jsonl"
    corpus.write_bytes(b"\xef\xbb\xbf" + GOOD.encode() + b"\n")
    txt = tmp_path / "bom.txt"
    txt.write_bytes(b"\xef\xbb\xbfhello\n")
    out = tmp_path / "out"
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-c", str(txt), "-b", "ref", "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    records = journal_cases(out)
    assert [r["case_id"] for r in records] == ["first", "bom-1"]


def test_a_corpus_that_is_a_folder_is_one_line(tmp_path):
    (tmp_path / "folder.jsonl").mkdir()
    proc = tokparity("compare", "llama-spm", "-c", str(tmp_path / "folder.jsonl"), "-b", "ref",
                     "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 2
    assert "folder.jsonl: is a folder with no .parquet files and no saved dataset" in one_error_line(proc)


def test_an_unreadable_corpus_is_one_line(tmp_path):
    corpus = jsonl(tmp_path / "secret.jsonl", GOOD)
    corpus.chmod(0)
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(tmp_path / "out"), "-q",
                     wrap=as_a_user)
    assert proc.returncode == 2
    assert "secret.jsonl: permission denied; make the corpus file readable" in one_error_line(proc)


def test_an_unreadable_corpus_is_one_line_in_process(tmp_path, monkeypatch, capsys):
    """The same with the permission error made by hand (the tests may run as root, whom chmod 000
    does not stop): the journal's fingerprint and the reader both open corpora through one function."""
    import tokparity.corpus.pipeline as opener  # (open_corpus)
    from tokparity.cli import main

    corpus = jsonl(tmp_path / "secret.jsonl", GOOD)

    def refuse(path, mode="r", *args, **kwargs):
        if Path(path) == corpus:
            raise PermissionError(13, "Permission denied", str(path))
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(opener, "open", refuse, raising=False)
    assert main(["compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "secret.jsonl: permission denied; make the corpus file readable" in err


def test_a_device_is_not_read_as_a_corpus(tmp_path):
    proc = tokparity("compare", "llama-spm", "-c", "/dev/zero", "-b", "ref", "-o", str(tmp_path / "out"), "-q",
                     timeout=60)
    assert proc.returncode == 2
    assert "/dev/zero: not a regular file" in one_error_line(proc)


# -- 4. file names that are not UTF-8 ------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file names are always UTF-8")
def test_file_names_that_are_not_utf8_run_and_resume(tmp_path, zoo):
    gguf = zoo("llama-spm").files["gguf"]
    model = os.fsdecode(bytes(tmp_path) + b"/m\xff.gguf")
    corpus = os.fsdecode(bytes(tmp_path) + b"/c\xfe.jsonl")
    out = os.fsdecode(bytes(tmp_path) + b"/out\xfd")
    Path(model).write_bytes(gguf.read_bytes())
    jsonl(Path(corpus), GOOD, '{"id": "two", "text": "  two  spaces"}')
    proc = tokparity("compare", model, "-c", corpus, "-b", "ref", "-b", GREEDY, "--oracle", "ref", "-o", out, "-q")
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 1), proc.stderr
    summary = json.loads((Path(out) / "summary.json").read_text("utf-8"))
    assert {r["model"] for r in summary["runs"]} == {"m\\xff"}  # the label, its byte escaped
    header, *records = (Path(out) / "cases.jsonl").read_bytes().splitlines()
    assert header.isascii() and json.loads(header)["args"]["corpora"] == [corpus]  # the name itself, kept
    assert {json.loads(r)["corpus"] for r in records} == {"c\\xfe"}
    for name in ("summary.md", "report.html", "mismatches.csv"):
        (Path(out) / name).read_text("utf-8")
    again = tokparity("compare", "--resume", out, "-q")
    assert "Traceback" not in again.stderr and again.returncode == proc.returncode, again.stderr


# -- 5. a CR in a case id or an engine's error -----------------------------------------------------

ENGINE = """\
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    print(json.dumps({"id": req["id"], "error": "boom\\r# ENGINE HEADING\\u2028\\x1b[31mred\\x85next"}), flush=True)
"""
BREAKERS = ("\r", "\u2028", "\u2029", "\x1b", "\x85")


def test_a_cr_in_a_case_id_or_an_engine_error_never_starts_a_line(tmp_path, zoo):
    zoo("llama-spm")
    engine = tmp_path / "engine.py"
    engine.write_text(ENGINE, "utf-8")
    corpus = jsonl(tmp_path / "cr.jsonl", json.dumps({"id": "x\r# CASE HEADING\u2029y\x1b[2J", "text": "hi there"}))
    out = tmp_path / "out"
    # (named: the evidence is cut at 200 characters with the backend's label first; the command as
    # label, the interpreter's and the engine's paths twice, left no room for the error where paths are long)
    proc = tokparity("compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-b", f"eng=cmd:{sys.executable} {engine}",
                     "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    explained = tokparity("explain", str(out))
    one_case = tokparity("explain", str(out), "x\r# CASE HEADING\u2029y\x1b[2J")
    assert one_case.returncode == 0, one_case.stderr
    summary_md = (out / "summary.md").read_text("utf-8")
    for name, text in [("summary.md", summary_md), ("stdout", proc.stdout), ("stderr", proc.stderr),
                       ("explain", explained.stdout), ("explain CASE", one_case.stdout)]:
        assert not any(b in text for b in BREAKERS), (name, text)
        assert not any(line.lstrip().startswith("#") for line in text.splitlines() if "HEADING" in line), (name, text)
    assert "x␍# CASE HEADING&lt;U+2029&gt;y&lt;0x1B&gt;\\[2J" in summary_md
    assert "engine.py: boom␍#" in summary_md
    explanations = " ".join((explained.stdout + one_case.stdout).split())  # (wrapped where the paths make it)
    assert "boom␍# ENGINE HEADING<U+2028><0x1B>[31mred<0x85>next" in explanations


def test_markdown_and_terminal_cells_are_single_lines():
    from tokparity.report.markdown import code, md
    from tokparity.textview import single_line

    hostile = "a\rb\nc\x00d\x1be\x7ff\x85g\u2028h\u2029i\ud800j\tk"
    for shown in (md(hostile), code(hostile), single_line(hostile)):
        assert shown.isprintable() and len(shown.splitlines()) == 1, repr(shown)
    assert single_line(hostile) == "a␍b c<0x00>d<0x1B>e<0x7F>f<0x85>g<U+2028>h<U+2029>i<U+D800>j k"
    assert single_line("plain ▁text, Ġpieces") == "plain ▁text, Ġpieces"
    # (a seventh campaign's find: a right-to-left override reordered the rest of explain's line)
    assert single_line("a\u202eb\u2067c\u200fd") == "a<U+202E>b<U+2067>c<U+200F>d"


# -- 6. numeric arguments --------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e9", "abc"])
def test_fuzz_seconds_must_be_a_usable_number(value, tmp_path):
    proc = tokparity("fuzz", "llama-spm", "-b", "ref", f"--seconds={value}", "-o", str(tmp_path / "out"), timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "argument --seconds: " in proc.stderr.splitlines()[-1]
    assert not (tmp_path / "out").exists()


def test_fuzz_resume_checks_the_seconds_its_journal_holds(tmp_path, zoo):
    zoo("llama-spm")
    out = tmp_path / "out"
    first = tokparity("fuzz", "llama-spm", "-b", "ref", "--seconds", "1", "--no-hypothesis", "-o", str(out), "-q")
    assert first.returncode in (0, 1), first.stderr
    journal = out / "cases.jsonl"
    header, rest = journal.read_text("utf-8").split("\n", 1)
    stored = json.loads(header)
    stored["args"]["seconds"] = math.nan  # written as NaN, which Python's JSON reads back
    journal.write_text(json.dumps(stored) + "\n" + rest, "utf-8")
    proc = tokparity("fuzz", "--resume", str(out), "-q", timeout=60)
    assert proc.returncode == 2
    # the journal's checks name its line before the argument's own check would see the value
    assert "cases.jsonl:1: argument 'seconds' is NaN, not a number of seconds above 0" in one_error_line(proc)


@pytest.mark.parametrize("value", ["-1", "1e3", "1" * 30, "9" * 5000])
def test_compare_max_chars_must_be_a_count(value, tmp_path):
    proc = tokparity("compare", "llama-spm", "-b", "ref", f"--max-chars={value}", "-o", str(tmp_path / "out"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "argument --max-chars: " in proc.stderr.splitlines()[-1]


def test_argument_types():
    assert positive_seconds("2.5") == 2.5 and non_negative_seconds("0") == 0.0
    assert positive_int("3") == 3 and non_negative_int("0") == 0
    for kind, bad in [(positive_seconds, "nan"), (positive_seconds, "inf"), (positive_seconds, "0"),
                      (positive_seconds, "-1"), (positive_seconds, "604801"), (non_negative_seconds, "-0.5"),
                      (positive_int, "0"), (positive_int, "1.5"), (positive_int, "9" * 5000),
                      (non_negative_int, "-1"), (positive_int, "10" + "0" * 15)]:
        with pytest.raises(argparse.ArgumentTypeError):
            kind(bad)
    with pytest.raises(TokparityError, match=r"^--seconds must be a number of seconds"):
        checked("--seconds", positive_seconds, math.nan)
    for bad in (True, 1.5, "x", None, [1]):
        with pytest.raises(TokparityError, match=r"^--max-chars expected a whole number"):
            checked("--max-chars", non_negative_int, bad)


# -- a saved dataset's description, hand-edited ----------------------------------------------------


@pytest.mark.parametrize("files, said", [
    ({"state.json": '{"_data_files": [{"filename": "missing.arrow"}]}'},
     "state.json: names 'missing.arrow', which is not a file in the dataset's folder"),
    ({"state.json": '{"_data_files": [{"filename": "../../etc/passwd"}]}'},  # (a name only: never outside)
     "state.json: names '../../etc/passwd', which is not a file in the dataset's folder"),
    ({"state.json": "[" * 100_000 + "]" * 100_000}, "state.json: cannot read the dataset's description (RecursionError"),
    ({"dataset_dict.json": '{"splits": ["."]}'}, "dataset_dict.json: split '.' is not a saved dataset in this folder"),
    ({"dataset_dict.json": '{"splits": ["../other"]}'},
     "dataset_dict.json: split '../other' is not a saved dataset in this folder"),
])
def test_a_hand_edited_saved_dataset_is_one_line(tmp_path, zoo, files, said):
    zoo("llama-spm")
    folder = tmp_path / "ds"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, "utf-8")
    proc = tokparity("compare", "llama-spm", "-b", "ref", "-c", str(folder), "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 2
    assert said in one_error_line(proc)


def test_an_error_naming_a_file_is_one_line_whatever_its_name(tmp_path, zoo):
    """A corpus name holding a newline and an escape sequence forged a second error line and drove
    the terminal (issue: hostile input, round 3): they are spelled out."""
    zoo("llama-spm")
    name = "a\ntokparity: error: forged\x1b[2J.jsonl"
    done = tokparity("compare", "llama-spm", "-c", str(tmp_path / name), "-b", "ref", "-o", str(tmp_path / "o"), "-q")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: ") and "\x1b" not in lines[0], lines
