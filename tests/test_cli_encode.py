"""`tokparity encode`, as a user runs it."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from tokparity.commands.encode import Row, render_text, unescape

EXAMPLE_ENGINE = Path(__file__).resolve().parents[1] / "examples" / "engines" / "llamacpp_engine.py"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity.cli", "encode", *args], capture_output=True, text=True,
                          timeout=180, input=stdin)


def test_llama_spm_llamacpp_and_golden(zoo):
    zoo("llama-spm")
    proc = run("llama-spm", "Hello world", "-b", "llama.cpp", "-b", "golden")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0] == "llama-spm · 'Hello␣world' (11 chars) · add_special off · parse_special off"
    assert lines[2].split() == ["[A]", "llama.cpp", "0.3.36", "15043", "3186"]
    assert lines[3].split() == ["▁Hello", "▁world"]
    assert lines[4].split() == ["[A]", "golden", "ggml-vocab-llama-spm.gguf.out", "15043", "3186"]
    assert lines[-1] == "all 2 backends agree (2 tokens)"


def test_llama_bpe_with_hf_json(zoo):
    zoo("llama-bpe")
    proc = run("llama-bpe", "Hello world", "-b", "llama.cpp", "-b", "golden", "-b", "hf", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["agree"] is True and out["groups"] == {"A": ["llama.cpp", "golden", "hf"]}
    assert [(b["name"], b["status"], b["ids"], b["pieces"]) for b in out["backends"]] == [
        ("llama.cpp", "ok", [9906, 1917], ["Hello", "Ġworld"]),
        ("golden", "ok", [9906, 1917], ["Hello", "Ġworld"]),
        ("hf", "ok", [9906, 1917], ["Hello", "Ġworld"]),
    ]


def test_a_user_engine_through_cmd(zoo):
    zoo("llama-spm")
    engine = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLE_ENGINE))} {{gguf}}"
    proc = run("llama-spm", "Hello world", "-b", "llama.cpp", "-b", engine, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [(b["group"], b["ids"]) for b in out["backends"]] == [("A", [15043, 3186]), ("A", [15043, 3186])]
    assert out["backends"][1]["name"] == engine and out["backends"][1]["pieces"] == ["▁Hello", "▁world"]


def test_disagreement_is_marked_and_exits_1(zoo):
    zoo("llama-spm")
    proc = run("llama-spm", " Hello", "-b", "llama.cpp", "-b", "hf-gguf")
    assert proc.returncode == 1, proc.stderr
    assert "≠ A from token 0: here 15043 ▁Hello, A has 29871 ▁" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "2 different answers: A = llama.cpp · B = hf-gguf"


def test_whitespace_is_visible_and_escapes_are_read(zoo):
    zoo("llama-bpe")
    proc = run("llama-bpe", r"a\tb\n c", "-e", "-b", "llama.cpp")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("llama-bpe · 'a→b↵␣c' (6 chars)")
    assert "ĉ" in proc.stdout and "Ċ" in proc.stdout  # pieces as the vocabulary spells them


def test_text_from_stdin_exactly(zoo):
    zoo("llama-spm")
    proc = run("llama-spm", "-", "-b", "llama.cpp", "--json", stdin="Hi\n")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["text"] == "Hi\n"


def test_unknown_backend_exits_2(zoo):
    zoo("llama-spm")
    proc = run("llama-spm", "Hello", "-b", "llamacpp")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("tokparity: error: unknown backend 'llamacpp'; known: ref, llama.cpp, sentencepiece, "
                                   "hf, tiktoken, hf-gguf, golden, mistral-common, rwkv, llama-server, llama.cpp-jinja, "
                                   "cmd:COMMAND, py:MODULE:CALLABLE, http:SERVER@[HOST:]PORT")


def test_default_backends_are_what_the_files_allow(zoo):
    zoo("botchan-unigram")
    proc = run("botchan-unigram", "Hello world", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # the pinned .model, and the GGUF and tokenizer.json tokparity derives from it (models.toml `derived`)
    assert [b["name"] for b in out["backends"]] == ["ref", "llama.cpp", "sentencepiece", "hf", "hf-gguf"]
    assert [b["ids"] for b in out["backends"]] == [[151, 88, 21, 887]] * 5


def test_render_failure_lines():
    answers = [Row("llama.cpp", "0.3.36", ids=[1, 2], pieces=["a", " b"], group="A"),
               Row("cmd:eng", "", status="crash", detail="killed by SIGSEGV on this case")]
    text = render_text("m", "x y", answers, False, False, columns=80)
    assert "  [A] llama.cpp 0.3.36  1 2" in text and "                        a ␣b" in text
    assert "  [!] cmd:eng           crash: killed by SIGSEGV on this case" in text
    assert text.splitlines()[-2:] == ["only llama.cpp answered (2 tokens)", "1 failed: cmd:eng (crash)"]


def test_unescape():
    assert unescape(r"a\nb\t\x41\u00e9\U0001F999\\q\q") == "a\nb\tAé🦙\\q\\q"


def test_trace_shows_the_reference_at_work(zoo):
    """--trace: the reference's partition, normalization and every merge, ending in the ids the
    table shows; with --json the trace goes to stderr so stdout stays one JSON document."""
    zoo("llama-spm")
    proc = run("llama-spm", "Hello  world", "-b", "ref", "--trace")
    assert proc.returncode == 0, proc.stderr
    trace = proc.stdout.split("trace of ref on llama-spm:\n")[1].splitlines()
    assert trace[1].split() == ["partition", "['Hello␣␣world']"]
    assert trace[2].split() == ["normalize", "'▁Hello▁▁world'"]
    merges = [line for line in trace if line.split()[0] == "merge"]
    assert len(merges) == 10 and merges[-1].endswith("-> ▁Hello ▁ ▁world")
    assert trace[-2].split(None, 1) == ["ids", "[15043, 29871, 3186]"]
    proc = run("llama-spm", "Hello  world", "-b", "ref", "--trace", "--json")
    assert json.loads(proc.stdout)["backends"][0]["ids"] == [15043, 29871, 3186]
    assert "merge       10 '▁H' + 'ello'" in proc.stderr


def test_an_engines_error_and_notes_reach_the_terminal_escaped(zoo, tmp_path):
    """An engine's error text and notes are its own (#31): ESC[2J, an OSC 52 clipboard write and an
    OSC 8 link used to be printed raw by `tokparity encode`; they are spelled out, as compare's
    reports spell them."""
    zoo("llama-spm")
    engine = tmp_path / "hostile.py"
    engine.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    if req['text'] == 'boom':\n"
        "        print(json.dumps({'id': req['id'], 'error': 'x\\x1b[2J\\x1b]52;c;aGk=\\x07y'}), flush=True)\n"
        "    else:\n"
        "        print(json.dumps({'id': req['id'], 'ids': [15043],\n"
        "                          'notes': ['\\x1b]8;;http://evil\\x1b\\\\link\\x1b]8;;\\x1b\\\\']}), flush=True)\n",
        "utf-8")
    spec = f"mine=cmd:{shlex.quote(sys.executable)} {shlex.quote(str(engine))}"
    for text in ("boom", "Hello"):
        proc = run("llama-spm", text, "-b", "llama.cpp", "-b", spec)
        assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout, proc.stdout
        assert "<0x1B>" in proc.stdout
    assert "note: <0x1B>]8;;http://evil" in proc.stdout
