"""Untrusted text and files: corpus text that is HTML, a spreadsheet formula or Markdown goes
through a real compare run (llama.cpp's golden ids against a greedy longest-match engine that
mismatches) and comes out escaped; bad corpus bytes are named by file and line; nothing in a
tokenizer folder is ever run."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tokparity.cli import main

ENGINES = Path(__file__).resolve().parents[1] / "engines"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "engines"  # the README's demo engines
GREEDY = f"cmd:{sys.executable} {EXAMPLES / 'greedy_engine.py'} {{gguf}}"
PACKAGE = Path(__file__).resolve().parents[2] / "tokparity"

# Each holds a run of two spaces or "HYPERLINK", which the greedy engine splits otherwise than
# SentencePiece, so every one of them is a mismatch that the reports show.
HOSTILE = {
    "img": "  <img src=x onerror=alert(1)>",
    "script": "  </div><script>alert('x')</script>",
    "hyperlink": '=HYPERLINK("http://x","y")',
    "plus": "+cmd|' /C calc'!A0  HYPERLINK",
    "minus": "-2+3+cmd|' /C calc'!A0  HYPERLINK",
    "at": "@SUM(1+1)*cmd|' /C calc'!A0  HYPERLINK",
    "tab": "\t=1+1  HYPERLINK",
    "cr": "\r=1+1  HYPERLINK",
    "md": "  | x | `y` [z](javascript:alert(1)) **w**\n# h",
}
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory, zoo):
    zoo("llama-spm")
    tmp = tmp_path_factory.mktemp("hostile")
    corpus = tmp / "hostile.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "text": v, "tags": {"kind": "hostile", "note": v[:12]}}) + "\n"
                              for k, v in HOSTILE.items()), "utf-8")
    out = tmp / "out"
    status = main(["compare", "llama-spm", "-c", str(corpus), "-b", GREEDY, "-b", "ref", "-o", str(out), "-q"])
    return status, out


def test_the_hostile_cases_really_mismatch(hostile_run):
    status, out = hostile_run
    assert status == 1
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        ids = {r["case_id"] for r in csv.DictReader(f) if r["backend"].startswith("cmd:")}
    assert ids == set(HOSTILE), f"cases the greedy engine got right, so no report shows them: {set(HOSTILE) - ids}"


def test_html_shows_markup_as_text(hostile_run):
    _, out = hostile_run
    page = (out / "report.html").read_text("utf-8")
    assert "<img src=x" not in page and "onerror=alert(1)>" not in page
    assert "<script>alert" not in page and "</div><script>" not in page
    # Shown as text (spaces made visible), in the case, in the tag filters and in the rate chart.
    assert '<div class="text">␣␣&lt;img␣src=x␣onerror=alert(1)&gt;</div>' in page
    assert "&lt;/div&gt;&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert '<option value="note=  &lt;img src=x">' in page
    # The page's own scripts are the only ones: the template's, none from the corpus.
    assert page.count("<script") == (Path(PACKAGE / "report" / "templates" / "report.html").read_text("utf-8")
                                     .count("<script"))


def test_csv_cells_never_start_a_formula(hostile_run):
    _, out = hostile_run
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    cells = [c for r in rows[1:] for c in r]
    assert not [c for c in cells if c.startswith(FORMULA_START)]
    texts = {r[rows[0].index("case_id")]: r[rows[0].index("text")] for r in rows[1:]}
    assert texts["hyperlink"] == "'" + HOSTILE["hyperlink"]
    assert texts["tab"] == "'" + HOSTILE["tab"] and texts["cr"] == "'" + HOSTILE["cr"]


def test_markdown_escapes_markup(hostile_run):
    _, out = hostile_run
    md = (out / "summary.md").read_text("utf-8")
    assert "<img" not in md and "<script" not in md
    # Every line of the report is one line: a text's newline or "| x |" cannot open a table row or a heading.
    body = md.split("## First mismatches to review", 1)[1]
    assert not re.search(r"^#\s*h", body, re.M)
    assert "](javascript:" not in md


def test_invalid_utf8_is_named_by_file_and_line(tmp_path, capsys, zoo):
    zoo("llama-spm")
    corpus = tmp_path / "bad.jsonl"
    corpus.write_bytes(b'{"id": "a", "text": "fine"}\n{"id": "b", "text": "caf\xe9 \xff"}\n')
    status = main(["compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and f"{corpus}:2: invalid UTF-8" in err[0]
    # What was done before the bad line is kept: case 1 is in the journal.
    lines = (tmp_path / "out" / "cases.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(x)["case_id"] for x in lines[1:]] == ["a"]


def test_long_cases_are_skipped_and_named(tmp_path, capsys, zoo):
    zoo("llama-spm")
    corpus = tmp_path / "long.jsonl"
    corpus.write_text(json.dumps({"id": "short", "text": "Hello world"}) + "\n"
                      + json.dumps({"id": "huge", "text": "ab " * 400_000}) + "\n", "utf-8")
    out = tmp_path / "out"
    status = main(["compare", "llama-spm", "-c", str(corpus), "-b", "ref", "-o", str(out), "--max-chars", "100000"])
    err = capsys.readouterr().err
    assert status == 0
    assert "skipping long/huge: 1,200,000 characters, more than --max-chars 100,000" in err
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["options"]["too_long"] == {"max_chars": 100000, "cases": 1, "first": [
        {"model": "llama-spm", "corpus": "long", "case_id": "huge", "chars": 1_200_000}]}
    assert {r["backend"]: r["cases"] for r in summary["runs"]}["ref"] == 1


def test_hf_folder_never_runs_the_folders_code(tmp_path, zoo, monkeypatch):
    """A tokenizer folder whose tokenizer_config.json points (auto_map) to a Python file of its own:
    AutoTokenizer is called with trust_remote_code=False, and the file never runs."""
    transformers = pytest.importorskip("transformers")
    from tokparity.backends.hf import HFBackend
    from tokparity.errors import TokparityError
    from tokparity.zoo import resolve_model

    folder = tmp_path / "evil"
    folder.mkdir()
    shutil.copy(zoo("lenml-llama2").files["tokenizer_json"], folder / "tokenizer.json")
    marker = tmp_path / "PWNED"
    (folder / "evil_tokenizer.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                                              "from transformers import PreTrainedTokenizerFast\n"
                                              "class EvilTokenizer(PreTrainedTokenizerFast):\n    pass\n")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "EvilTokenizer",
        "auto_map": {"AutoTokenizer": [None, "evil_tokenizer.EvilTokenizer"]},
        "chat_template": "{{ cycler.__init__.__globals__.os.system('touch " + str(marker) + "') }}",
    }), "utf-8")
    calls = []
    real = transformers.AutoTokenizer.from_pretrained

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", spy)
    try:
        backend = HFBackend(resolve_model(str(folder)), loader="transformers")
    except TokparityError as e:  # refusing the folder is fine; running its code is not
        assert str(folder) in str(e)
    else:
        assert backend.encode("Hello world")  # it tokenizes with the files, not the code
    assert calls and all(c.get("trust_remote_code") is False for c in calls)
    assert not marker.exists()


def test_nothing_in_tokparity_unpickles_evaluates_or_trusts_remote_code():
    """No code path that could run what a file holds: checked on the source, so a new one fails here.
    Chat templates are code from files that ``--ops chat`` renders on purpose: only in jinja2's
    immutable sandbox, in a child process (tokparity/chat/render.py, imported by the sandbox's
    child alone), and through transformers' ``apply_chat_template`` in the hf backend, which a chat
    run starts in a child (tokparity.run.judge) — and nowhere else."""
    bad = re.compile(r"\bpickle\b|\bmarshal\.loads|\beval\(|\bexec\(|trust_remote_code\s*=\s*True"
                     r"|yaml\.load\(|torch\.load\(|allow_pickle\s*=\s*True")
    lines = [(p.relative_to(PACKAGE).as_posix(), n, line) for p in sorted(PACKAGE.rglob("*.py"))
             for n, line in enumerate(p.read_text("utf-8").splitlines(), 1) if not line.lstrip().startswith("#")]
    assert [f"{path}:{n}: {line.strip()}" for path, n, line in lines if bad.search(line)] == []
    calls = re.compile(r"\.apply_chat_template\(|\bEnvironment\(|\.from_string\(|\.from_code\(|\bjinja2\.Template\(")
    assert {path for path, _, line in lines if calls.search(line)} == {"backends/hf.py", "chat/render.py"}
    render = (PACKAGE / "chat" / "render.py").read_text("utf-8")
    # (every environment a render uses is jinja2's immutable sandbox, or a class made from it)
    assert "else ImmutableSandboxedEnvironment" in render and "jinja2.Environment(" not in render
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from tokparity.chat.render import _lenient
    assert all(issubclass(_lenient(kind), ImmutableSandboxedEnvironment) for kind in ("concatenated", "lenient"))
