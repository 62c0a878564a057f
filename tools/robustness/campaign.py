"""A hostile-input campaign against the ``tokparity`` command line itself, beyond tokenizer files:
corpora, journals, arguments, signals, engines and tokenizer.json files that hang or blow up, the
output folder as a trap, concurrent writers, compression bombs, hand-edited run folders for
``explain`` and a hostile environment.

Every trial runs the real command (``python -m tokparity …``) as a user would, in a scratch
folder, and is judged on what the standards promise:

* **traceback**: a Python traceback on stdout or stderr;
* **hang**: the command did not end within the trial's limit (then its process group is killed);
* **orphan**: a process started by the run is still alive after it ended (every process of a
  trial carries ``TOKPARITY_CAMPAIGN_MARK=<token>`` in its environment, which children inherit,
  so a forked engine that left its process group is still found in ``/proc``);
* **lost**: a run that ended (or was resumed to its end) lacks cases, or counts one twice;
* **status**: an exit status the trial does not allow (e.g. 0 with nothing compared), or exit 2
  without exactly one ``tokparity: error: …`` line;
* **clobbered**: a file the run must not write (a symbolic link's target, one of its inputs) changed;
* **ran**: a program or module a data file or the current folder planted left its mark;
* **published**: a secret (an environment variable, a file outside the model folder) reached the
  terminal or a file of the run's report folder.

Every command starts as the ``tokparity`` console script does, with the scratch folder off its
own path (``python -P -m tokparity``): only what tokparity starts could import from there.

Anything else is ``held``. Exit status 1 if any trial is bad; what went wrong per trial is in
``OUT/campaign.jsonl``::

    python -m tools.robustness.campaign [-o reports/hostile-campaign] [--family engines]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARK = "TOKPARITY_CAMPAIGN_MARK"
HELD, BAD = "held", "bad"
TRACEBACK = "Traceback (most recent call last)"
DEFAULT_LIMIT = 60.0
MODEL = "llama-spm"  # small, golden ids in the zoo, llama.cpp's SPM: every run loads in a second
JOURNAL = "cases.jsonl"
OK_STATUSES = frozenset({0, 1})  # judged: agreement, or mismatches found
CLEAR = frozenset({2})  # refused with one line

# A cmd: engine that answers every text with its UTF-8 bytes as ids (a wrong but well-behaved
# engine), or misbehaves as its first argument says. Written into the scratch folder.
ENGINE = r'''
import json, os, sys, time
mode = sys.argv[1]
if mode == "die-at-start":
    sys.exit(3)
if mode == "fork-exit":
    if os.fork() == 0:
        time.sleep(3600)
    os._exit(7)
if mode == "fork-orphan" and os.fork() == 0:
    os.setsid()
    time.sleep(3600)
if mode == "never-read":
    time.sleep(3600)
n = 0
for line in sys.stdin:
    req = json.loads(line)
    n += 1
    if mode == "slow":
        time.sleep(0.05)
    if req.get("op") == "decode":
        if mode == "hang-decode":
            time.sleep(3600)
        if mode == "crash-decode":
            os._exit(9)
        reply = {"id": req["id"], "text": bytes(i % 256 for i in req["ids"]).decode("utf-8", "replace")}
        if mode == "bad-utf8-decode":
            sys.stdout.buffer.write(b'{"id": %d, "text": "\xff\xfe"}\n' % req["id"])
            sys.stdout.flush()
            continue
        print(json.dumps(reply), flush=True)
        continue
    ids = list(req["text"].encode("utf-8", "surrogatepass"))
    if mode == "exit7-after-3" and n > 3:
        os._exit(7)
    if mode == "hang-after-3" and n > 3:
        time.sleep(3600)
    if mode == "not-json":
        print("this is not JSON at all", flush=True)
        continue
    if mode == "bad-utf8":
        sys.stdout.buffer.write(b'{"id": %d, "ids": [1], "notes": ["\xff"]}\n' % req["id"])
        sys.stdout.flush()
        continue
    replies = {
        "floats": {"id": req["id"], "ids": [1.5]},
        "bools": {"id": req["id"], "ids": [True, False]},
        "negative": {"id": req["id"], "ids": [-1]},
        "huge-int": {"id": req["id"], "ids": [10 ** 30]},
        "strings": {"id": req["id"], "ids": ["1"]},
        "null": {"id": req["id"], "ids": None},
        "wrong-id": {"id": req["id"] + 1000, "ids": ids},
        "no-id": {"ids": ids},
        "surrogate-error": {"id": req["id"], "error": "\udc80 broke"},
        "cr-error": {"id": req["id"], "error": "line one\r# heading\n| a | b |"},
        "huge-reply": {"id": req["id"], "ids": [1] * 2_000_000},
    }
    reply = replies.get(mode, {"id": req["id"], "ids": ids})
    if mode == "stderr-flood":
        sys.stderr.write("x" * 1_000_000)
        sys.stderr.flush()
    if mode == "close-stdout":
        os.close(1)
        time.sleep(3600)
    print(json.dumps(reply), flush=True)
    if mode == "extra-replies":
        print(json.dumps(reply), flush=True)
'''

# A py: engine module with the same idea, for the in-process protocol.
PY_ENGINE = r'''
import os, sys, time
def good(text, add_special, parse_special):
    return list(text.encode("utf-8", "surrogatepass"))
def floats(text, add_special, parse_special):
    return [1.5]
def bools(text, add_special, parse_special):
    return [True, False]
def generator(text, add_special, parse_special):
    return (i for i in [1, 2])
def raises_system_exit(text, add_special, parse_special):
    raise SystemExit(3)
def raises_keyboard_interrupt(text, add_special, parse_special):
    raise KeyboardInterrupt
def recursion(text, add_special, parse_special):
    return recursion(text, add_special, parse_special)
def returns_none(text, add_special, parse_special):
    return None
def exits(text, add_special, parse_special):
    os._exit(5)
'''


@dataclass
class Step:
    """One command of a trial. ``kill``: (signal, lines, seconds): the signal sent to tokparity
    once its journal has that many lines or that many seconds have passed, whichever is first
    (the run is then expected to end with 128 + signal, or -signal). Seconds for the runs whose
    journal grows in batches: an engine that hangs holds back the batch it is in."""

    argv: list[str]
    statuses: frozenset[int] = OK_STATUSES | CLEAR
    kill: tuple[int, int, float] | None = None
    limit: float = DEFAULT_LIMIT
    stdin: bytes = b""
    copies: int = 1  # the same command started this many times at once (concurrent writers)
    cwd: str | None = None  # where it starts, relative to the scratch folder (default: the scratch folder)
    prepare: Callable[[], None] | None = None  # done before it starts (an edit between a run and its resume)


@dataclass
class Trial:
    family: str
    name: str
    steps: list[Step]
    out: str | None = None  # the run's report folder, relative to the scratch folder
    cases: int | None = None  # how many distinct cases the journal must hold at the end
    env: dict[str, str] = field(default_factory=dict)
    untouched: list[str] = field(default_factory=list)  # files (relative to the scratch folder) no step may change
    never: list[str] = field(default_factory=list)  # marks (relative to the scratch folder) a planted program leaves
    secret: str | None = None  # a text no output may hold (it is in the trial's environment as CAMPAIGN_SECRET)


@dataclass
class Verdict:
    kind: str  # held | bad
    problems: list[str]
    statuses: list[int]
    seconds: float
    stderr: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class Workspace:
    root: Path
    python: str = sys.executable

    @property
    def engine(self) -> Path:
        return self.root / "engine.py"

    def cmd(self, mode: str, path_arg: str = "{gguf}") -> str:
        return f"cmd:{self.python} {self.engine} {mode} {path_arg}".rstrip()

    def write(self, name: str, data: bytes | str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        path.write_bytes(data)
        return path


def corpus_lines(n: int, prefix: str = "c") -> list[str]:
    texts = ["Hello world", "  two  spaces", "tab\there", "émoji 🦙", "数字 123", "<s> special", ""]
    return [json.dumps({"id": f"{prefix}{i:04d}", "text": texts[i % len(texts)] + f" {i}"}) for i in range(n)]


def compare(*args: str, out: str = "out") -> list[str]:
    return ["compare", MODEL, *args, "-o", out, "-q", "--no-diagnose", "--timeout", "3"]


# ---------------------------------------------------------------------------------------------
# families


def corpora(ws: Workspace) -> Iterator[Trial]:
    """Hostile corpus files through a compare with a well-behaved cmd: engine. A run that is not
    refused must judge every good line; one refused keeps the cases before the bad line."""
    good = corpus_lines(5)
    bad_lines = {
        "invalid-json": "{not json",
        "lone-surrogate-text": '{"id": "s", "text": "a\\ud800b"}',
        "lone-surrogate-id": '{"id": "\\udc80", "text": "x"}',
        "lone-surrogate-tag": '{"id": "t", "text": "x", "tags": {"k": "\\ud800"}}',
        "huge-int": '{"id": "h", "text": "x", "n": ' + "9" * 5000 + "}",
        "deep-nesting": '{"id": "d", "text": "x", "tags": ' + "[" * 200_000 + "]" * 200_000 + "}",
        "text-number": '{"id": "n", "text": 5}',
        "text-null": '{"id": "n", "text": null}',
        "id-list": '{"id": [1], "text": "x"}',
        "tags-string": '{"id": "t", "text": "x", "tags": "oops"}',
        "record-list": '["x"]',
        "record-string": '"x"',
        "nan": '{"id": "n", "text": NaN}',
        "nul-bytes": '{"id": "z", "text": "a\\u0000b"}',
        "cr-in-id": '{"id": "a\\rb\\n# heading", "text": "x"}',
        "bidi-id": '{"id": "\\u202eevil", "text": "x"}',
        "duplicate-key": '{"id": "a", "text": "x", "text": "y"}',
    }
    for name, line in bad_lines.items():
        path = ws.write(f"corpora/{name}.jsonl", "\n".join(good[:3] + [line] + good[3:]) + "\n")
        yield Trial("corpora", name, [Step(compare("-c", str(path), "-b", ws.cmd("good")))], out="out")
    raw = {
        "invalid-utf8": b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "\xff"}\n',
        "bom": b"\xef\xbb\xbf" + "\n".join(good).encode() + b"\n",
        "crlf": "\r\n".join(good).encode() + b"\r\n",
        "empty": b"",
        "only-blank-lines": b"\n\n\n",
        "binary": bytes(range(256)) * 4,
        "no-final-newline": "\n".join(good).encode(),
        "gzip-named-jsonl": b"\x1f\x8b\x08\x00" + b"\x00" * 64,
    }
    for name, data in raw.items():
        path = ws.write(f"corpora/{name}.jsonl", data)
        yield Trial("corpora", name, [Step(compare("-c", str(path), "-b", ws.cmd("good")))], out="out")
    txt = ws.write("corpora/long-line.txt", "a" * 3_000_000 + "\nshort\n")
    yield Trial("corpora", "long-line-txt", [Step(compare("-c", str(txt), "-b", "ref", "--max-chars", "1000"))],
                out="out", cases=2)  # the long one is journaled as skipped, with its reason
    folder = ws.root / "corpora" / "a-folder.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    yield Trial("corpora", "folder", [Step(compare("-c", str(folder), "-b", "ref"), statuses=CLEAR)])
    yield Trial("corpora", "missing", [Step(compare("-c", str(ws.root / "nope.jsonl"), "-b", "ref"), statuses=CLEAR)])
    unreadable = ws.write("corpora/unreadable.jsonl", "\n".join(good) + "\n")
    unreadable.chmod(0)
    if os.geteuid() != 0:  # root reads it anyway: nothing to test then
        yield Trial("corpora", "unreadable", [Step(compare("-c", str(unreadable), "-b", "ref"), statuses=CLEAR)])
    weird = ws.write(os.fsdecode(b"corpora/\xff\xfe-name.jsonl"), "\n".join(good) + "\n")
    yield Trial("corpora", "non-utf8-file-name", [Step(compare("-c", str(weird), "-b", "ref"))], out="out", cases=5)
    # The run's own journal as its corpus: it must be refused, not overwritten.
    ws.write("self/cases.jsonl", "\n".join(good) + "\n")
    yield Trial("corpora", "corpus-is-the-journal",
                [Step(compare("-c", "self/cases.jsonl", "-b", "ref", out="self"), statuses=CLEAR)])


def engines(ws: Workspace) -> Iterator[Trial]:
    """Engines that misbehave: each run must record the case (crash, timeout, error) and go on,
    with every case of the corpus judged and no process of the engine left."""
    path = ws.write("corpora/engines.jsonl", "\n".join(corpus_lines(8)) + "\n")
    modes = ["good", "die-at-start", "fork-exit", "fork-orphan", "never-read", "hang-decode", "crash-decode",
             "bad-utf8-decode", "exit7-after-3", "hang-after-3", "not-json", "bad-utf8", "floats", "bools",
             "negative", "huge-int", "strings", "null", "wrong-id", "no-id", "surrogate-error", "cr-error",
             "huge-reply", "stderr-flood", "close-stdout", "extra-replies"]
    # (engines that never answer anything: stopped in one line after three starts)
    never_answers = ("die-at-start", "never-read", "fork-exit", "not-json", "wrong-id", "no-id", "close-stdout")
    for mode in modes:
        extra = ["--ops", "encode,decode"] if "decode" in mode else []
        yield Trial("engines", f"cmd-{mode}",
                    [Step(compare("-c", str(path), "-b", ws.cmd(mode), *extra, "--timeout", "2"),
                          statuses=CLEAR if mode in never_answers else OK_STATUSES, limit=120)],
                    out="out", cases=None if mode in never_answers else 8)
    ws.write("pyengine/hostile_py_engine.py", PY_ENGINE)
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ws.root / "pyengine"), os.environ.get("PYTHONPATH")]))}
    for fn in ["good", "floats", "bools", "generator", "raises_system_exit", "raises_keyboard_interrupt",
               "recursion", "returns_none"]:
        yield Trial("engines", f"py-{fn}", [Step(compare("-c", str(path), "-b", f"py:hostile_py_engine:{fn}"),
                                                 statuses=OK_STATUSES)], out="out", cases=8, env=env)
    # A model file whose name would be a shell command if a template put it inside quotes.
    gguf = _zoo_file("gguf")
    hostile = ws.root / "models" / "m;touch${IFS}PWNED;#.gguf"
    hostile.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(gguf, hostile)
    for form in (f"cmd:sh -c '{ws.python} {ws.engine} good {{gguf}}'", ws.cmd("good")):
        yield Trial("engines", f"hostile-model-name{'-sh' if 'sh -c' in form else ''}",
                    [Step(["compare", str(hostile), "-c", str(path), "-b", "ref", "-b", form, "-o", "out", "-q",
                           "--no-diagnose"])], out="out")


def signals(ws: Workspace) -> Iterator[Trial]:
    """Stopped halfway, then resumed: reports of what was done on SIGINT/SIGTERM, nothing left
    running, and the resumed run holds every case once."""
    sizes = {"slow": 120, "hang-after-3": 16}  # the hanging engine costs a timeout every 3 cases
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGKILL):
        for mode, jobs in (("slow", "1"), ("slow", "2"), ("hang-after-3", "1")):
            n = sizes[mode]
            path = ws.write(f"corpora/signals-{n}.jsonl", "\n".join(corpus_lines(n)) + "\n")
            run = compare("-c", str(path), "-b", ws.cmd(mode), "-j", jobs, "--timeout", "2")
            stopped = frozenset({128 + sig, -sig})
            yield Trial("signals", f"{sig.name}-{mode}-j{jobs}",
                        [Step(run, statuses=stopped, kill=(sig, 6, 4.0) if mode == "slow" else (sig, 10**9, 4.0)),
                         Step(["compare", "--resume", "out", "-q"], statuses=OK_STATUSES, limit=300)],
                        out="out", cases=n)
    # A chat template that loops for ever keeps the sandbox's child busy: every stop signal ends it too.
    looping = _repository(ws, "looping-template", LOOP)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGKILL):
        yield Trial("signals", f"{sig.name}-looping-template",
                    [Step(["compare", str(looping), "--ops", "chat", "-b", "hf", "-o", "out", "-q"],
                          statuses=frozenset({128 + sig, -sig}), kill=(sig, 10**9, 4.0), limit=120)], out="out")


def arguments(ws: Workspace) -> Iterator[Trial]:
    """Options with values a careless user types: one line and exit 2, or a normal run, in time."""
    path = ws.write("corpora/arguments.jsonl", "\n".join(corpus_lines(20) + [
        json.dumps({"id": "backtrack", "text": "a" * 30 + "!"})]) + "\n")
    ws.write("a-file", "x")
    base = ["-c", str(path), "-b", ws.cmd("good")]
    refused = {
        "timeout-inf": ["--timeout", "inf"], "timeout-nan": ["--timeout", "nan"], "timeout-1e7": ["--timeout", "1e7"],
        "timeout-negative": ["--timeout", "-1"], "timeout-zero": ["--timeout", "0"], "timeout-word": ["--timeout", "x"],
        "jobs-negative": ["-j", "-1"], "jobs-huge": ["-j", "100000"], "max-chars-negative": ["--max-chars", "-5"],
        "out-is-a-file": ["-o", "a-file"], "out-in-proc": ["-o", "/proc/tokparity-campaign"],
        "resume-missing": ["--resume", "nope"], "resume-a-file": ["--resume", "a-file"],
        "known-missing": ["--known", "nope.toml"], "known-folder": ["--known", "corpora"],
        "known-binary": ["--known", str(ws.write("k.toml", bytes(range(256))))],
        "known-wrong-type": ["--known", str(ws.write("k2.toml", "models = 5\n"))],
        "known-catastrophic-regex": ["--known", str(ws.write("k3.toml", _catastrophic_known()))],
        "oracle-unknown": ["--oracle", "nope"], "backend-unknown": ["-b", "nope"],
        "oracle-is-only-backend": ["-b", "ref", "--oracle", "ref"],
    }
    for name, extra in refused.items():
        corpus_and_engine = base[:2] if extra[0] == "-b" else base  # the backend is the point there
        out = [] if "-o" in extra else ["-o", "out"]
        statuses = OK_STATUSES | CLEAR if name in ("jobs-huge", "known-catastrophic-regex") else CLEAR
        yield Trial("arguments", name, [Step(["compare", MODEL, *corpus_and_engine, *extra, *out, "-q",
                                              "--no-diagnose"], statuses=statuses)])
    runs = {
        "jobs-40": ["-j", "40"], "jobs-0": ["-j", "0"], "max-chars-zero": ["--max-chars", "0"],
        "timeout-tiny": ["--timeout", "0.5"],
    }
    for name, extra in runs.items():
        yield Trial("arguments", name, [Step(compare(*base, *extra), statuses=OK_STATUSES)], out="out", cases=21)
    tails = {
        "encode-beyond-unicode": ["encode", MODEL, "-e", "\\U00110000"],
        "encode-lone-surrogate": ["encode", MODEL, "-e", "\\ud800"],
        "fuzz-seconds-nan": ["fuzz", MODEL, "-b", "ref", "--seconds", "nan", "-o", "fz"],
        "fuzz-seconds-inf": ["fuzz", MODEL, "-b", "ref", "--seconds", "inf", "-o", "fz"],
        "fuzz-seconds-negative": ["fuzz", MODEL, "-b", "ref", "--seconds", "-3", "-o", "fz"],
        "cache-is-a-file": ["zoo", "path", MODEL],
    }
    for name, argv in tails.items():
        env = {"TOKPARITY_CACHE": str(ws.root / "a-file")} if name == "cache-is-a-file" else {}
        # encode's 1 is "a backend failed", said in its table: fine for a text no backend can take
        statuses = OK_STATUSES | CLEAR if name.startswith("encode") else CLEAR
        yield Trial("arguments", name, [Step(argv, statuses=statuses)], env=env)


def journals(ws: Workspace) -> Iterator[Trial]:
    """A finished run's journal damaged by hand, then ``--resume``: a clean resume that keeps every
    case once, or one line naming the journal."""
    n = 12
    path = ws.write("corpora/journals.jsonl", "\n".join(corpus_lines(n)) + "\n")
    base = ws.root / "journal-base"
    subprocess.run([sys.executable, "-m", "tokparity", *compare("-c", str(path), "-b", "ref", "-b", ws.cmd("good"),
                                                                out=str(base))],
                   cwd=ws.root, capture_output=True, timeout=DEFAULT_LIMIT, env=_env(ws, {}, "base"))
    lines = (base / JOURNAL).read_bytes().split(b"\n")
    header, records = json.loads(lines[0]), [json.loads(x) for x in lines[1:] if x.strip()]
    for name, damaged in _damaged_journals(header, records):
        folder = ws.root / "journals" / name
        shutil.copytree(base, folder)
        (folder / JOURNAL).write_bytes(damaged)
        yield Trial("journals", name, [Step(["compare", "--resume", str(folder), "-q"])],
                    out=str(folder), cases=None)


def _damaged_journals(header: dict, records: list[dict]) -> Iterator[tuple[str, bytes]]:
    def dump(h: object, recs: Sequence[object]) -> bytes:
        return b"".join(json.dumps(x, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
                        for x in [h, *recs])

    wrong_values: list[object] = [None, 5, "x", [], {}, 10 ** 40, float("nan"), True]
    for key in list(header):
        yield f"header-without-{key}", dump({k: v for k, v in header.items() if k != key}, records)
        for i, value in enumerate(wrong_values):
            yield f"header-{key}-wrong-{i}", dump({**header, key: value}, records)
    for key in list(header.get("args", {})):
        yield f"args-{key}-wrong", dump({**header, "args": {**header["args"], key: {"x": 1}}}, records)
    first = records[0]
    for key in list(first):
        yield f"record-without-{key}", dump(header, [{k: v for k, v in first.items() if k != key}, *records[1:]])
        for i, value in enumerate(wrong_values):
            yield f"record-{key}-wrong-{i}", dump(header, [{**first, key: value}, *records[1:]])
    yield "header-a-list", dump([header], records)
    yield "record-a-list", dump(header, [[first], *records[1:]])
    yield "duplicated-record", dump(header, [first, *records])
    yield "cut-last-line", dump(header, records)[:-20]
    yield "garbage-line", dump(header, records[:3]) + b"{garbage\n" + dump(header, records[3:]).split(b"\n", 1)[1]
    yield "invalid-utf8-line", dump(header, records[:3]) + b'{"x": "\xff"}\n'
    yield "nul-bytes", dump(header, records).replace(b"\n", b"\n\x00", 1)
    yield "empty-file", b""
    yield "header-only", dump(header, [])
    yield "n-negative", dump(header, [{**first, "n": -1}, *records[1:]])
    yield "n-beyond-corpus", dump(header, [*records, {**first, "n": 10 ** 6}])


def models(ws: Workspace) -> Iterator[Trial]:
    """tokenizer.json files that hang or blow up a tokenizer, run through ``compare`` with the
    reference and Hugging Face tokenizers: a clear refusal, or cases recorded as failures."""
    path = ws.write("corpora/models.jsonl", json.dumps({"id": "a", "text": "a" * 30 + "!"}) + "\n"
                    + "\n".join(corpus_lines(4)) + "\n")
    base = json.loads(Path(_zoo_file("tokenizer_json", "llama-bpe")).read_text("utf-8"))
    variants: dict[str, dict] = {
        "catastrophic-split": {"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(a|a)+$"},
                                                 "behavior": "Isolated", "invert": False}},
        "replace-chain": {"normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"String": "a"}, "content": "aaa"}] * 22}},
        "replace-empty-pattern": {"normalizer": {"type": "Replace", "pattern": {"String": ""}, "content": "x"}},
        "split-bad-regex": {"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(["},
                                              "behavior": "Isolated", "invert": False}},
        "split-no-pattern": {"pre_tokenizer": {"type": "Split", "behavior": "Isolated", "invert": False}},
        "split-string-pattern": {"pre_tokenizer": {"type": "Split", "pattern": "a", "behavior": "Isolated",
                                                   "invert": False}},
    }
    for name, change in variants.items():
        folder = ws.root / "models" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "tokenizer.json").write_text(json.dumps({**base, **change}), "utf-8")
        for backend in ("ref", "hf"):
            yield Trial("models", f"{name}-{backend}",
                        [Step(["compare", str(folder), "-c", str(path), "-b", backend, "-o", "out", "-q",
                               "--no-diagnose"], limit=120)])
            yield Trial("models", f"{name}-encode-{backend}",
                        [Step(["encode", str(folder / "tokenizer.json"), "-b", backend, "-e", "a" * 30 + "!"],
                              limit=120)])


REPORTS = ("cases.jsonl", "summary.json", "report.html", "mismatches.csv", "summary.md")


def outputs(ws: Workspace) -> Iterator[Trial]:
    """The output folder as a trap and the CI files as weapons: a report's name taken by a symbolic
    link to a file elsewhere or by a folder, ``--junit`` or ``$GITHUB_STEP_SUMMARY`` naming the
    corpus: one line before the run, and the file elsewhere never written."""
    path = ws.write("corpora/outputs.jsonl", "\n".join(corpus_lines(6)) + "\n")
    ws.write("victim.txt", "precious\n")
    for report in REPORTS:
        trap = ws.root / "traps" / f"link-{report}"
        trap.mkdir(parents=True, exist_ok=True)
        if not (trap / report).is_symlink():
            (trap / report).symlink_to(ws.root / "victim.txt")
        yield Trial("outputs", f"symlink-{report}", [Step(compare("-c", str(path), "-b", ws.cmd("good"),
                                                                  out=str(trap)), statuses=CLEAR)],
                    untouched=["victim.txt"])
        folder = ws.root / "traps" / f"folder-{report}"
        (folder / report).mkdir(parents=True, exist_ok=True)
        yield Trial("outputs", f"folder-{report}", [Step(compare("-c", str(path), "-b", "ref", out=str(folder)),
                                                         statuses=CLEAR)])
    yield Trial("outputs", "junit-is-the-corpus",
                [Step(compare("-c", str(path), "-b", "ref", "--junit", str(path)), statuses=CLEAR)],
                untouched=["corpora/outputs.jsonl"])
    yield Trial("outputs", "step-summary-is-the-corpus", [Step(compare("-c", str(path), "-b", "ref"), statuses=CLEAR)],
                env={"GITHUB_STEP_SUMMARY": str(path)}, untouched=["corpora/outputs.jsonl"])
    yield Trial("outputs", "out-is-the-corpus-folder",
                [Step(compare("-c", str(path), "-b", "ref", out="corpora"), statuses=OK_STATUSES | CLEAR)],
                untouched=["corpora/outputs.jsonl"])


def writers(ws: Workspace) -> Iterator[Trial]:
    """Two writers at once: two runs into one output folder, two ``regress --update`` of one goldens
    folder. One may be refused in one line; neither may fail otherwise or leave a damaged result."""
    path = ws.write("corpora/writers.jsonl", "\n".join(corpus_lines(30)) + "\n")
    yield Trial("writers", "two-compares-one-folder",
                [Step(compare("-c", str(path), "-b", ws.cmd("slow"), "-o", "out"), copies=2,
                      statuses=OK_STATUSES | CLEAR, limit=120)], out="out", cases=30)
    yield Trial("writers", "two-updates-one-goldens",
                [Step(["regress", "--update", MODEL, "-c", "edge", "--goldens", "goldens", "-q"], copies=2,
                      statuses=OK_STATUSES | CLEAR, limit=180),
                 Step(["regress", MODEL, "--goldens", "goldens", "-o", "out", "-q"], statuses=OK_STATUSES, limit=180)])


def bombs(ws: Workspace) -> Iterator[Trial]:
    """Compressed inputs that expand without end: a 256 MiB line in a small gzip or zstd corpus
    (refused by the line cap, or skipped unread by --max-chars, within seconds), and a goldens file
    that expands past what goldens hold."""
    import gzip

    line = b'{"id": "bomb", "text": "' + b"a" * (256 << 20) + b'"}\n'
    good = "\n".join(corpus_lines(3)).encode() + b"\n"
    ws.write("corpora/bomb.jsonl.gz", gzip.compress(good + line, 9, mtime=0))
    try:
        import zstandard
        ws.write("corpora/bomb.jsonl.zst", zstandard.ZstdCompressor(level=19).compress(good + line))
        kinds: tuple[str, ...] = ("gz", "zst")
    except ImportError:  # (zstandard is in tokparity[data]: the campaign's environment has it)
        kinds = ("gz",)
    for kind in kinds:
        yield Trial("bombs", f"{kind}-line", [Step(compare("-c", f"corpora/bomb.jsonl.{kind}", "-b", "ref"),
                                                   statuses=OK_STATUSES | CLEAR, limit=120)])
        yield Trial("bombs", f"{kind}-line-max-chars",  # (the line skipped unread, the three cases around it run)
                    [Step(compare("-c", f"corpora/bomb.jsonl.{kind}", "-b", "ref", "--max-chars", "1000"),
                          statuses=OK_STATUSES, limit=120)], out="out", cases=4)  # (3 run, 1 journaled as skipped)
    header = json.dumps({"goldens": 1, "model": MODEL, "oracles": {"plain": ["llama.cpp"], "add_special": ["llama.cpp"]},
                         "wrap": [[1], []]}).encode() + b"\n"
    ws.write(f"bomb-goldens/{MODEL}.jsonl.gz", gzip.compress(header + b'{"corpus": "edge"' + b" " * (200 << 20) + b"}\n",
                                                            9, mtime=0))
    yield Trial("bombs", "goldens-line", [Step(["regress", MODEL, "--goldens", "bomb-goldens", "-o", "out", "-q"],
                                               statuses=CLEAR, limit=120)])


def explains(ws: Workspace) -> Iterator[Trial]:
    """``explain`` on a finished run's folder edited by hand: summary.json, mismatches.csv and the
    journal changed, truncated or replaced; one line naming the file, or the explanation."""
    path = ws.write("corpora/explain.jsonl", "\n".join(corpus_lines(8)) + "\n")
    base = ws.root / "explain-base"
    made = subprocess.run([sys.executable, "-m", "tokparity", *compare("-c", str(path), "-b", "ref", "-b",
                                                                       ws.cmd("good"), out=str(base))],
                          cwd=ws.root, capture_output=True, timeout=DEFAULT_LIMIT, env=_env(ws, {}, "explain-base"))
    if made.returncode not in OK_STATUSES:  # (the campaign's own set-up: loud, not a trial)
        raise RuntimeError(f"the explain family's base run failed (exit {made.returncode}): "
                           f"{made.stderr.decode('utf-8', 'replace')[-500:]}")
    summary = json.loads((base / "summary.json").read_text("utf-8"))
    rows = (base / "mismatches.csv").read_text("utf-8").split("\n")
    edits: dict[str, tuple[str, bytes]] = {
        "summary-runs-number": ("summary.json", json.dumps({**summary, "runs": 5}).encode()),
        "summary-list": ("summary.json", b"[1, 2]"),
        "summary-deep": ("summary.json", b"[" * 100_000 + b"]" * 100_000),
        "summary-truncated": ("summary.json", (base / "summary.json").read_bytes()[:100]),
        "csv-header-only": ("mismatches.csv", rows[0].encode() + b"\n"),
        "csv-ids-deep": ("mismatches.csv", "\n".join([rows[0]] + [r.replace('"[', '"' + "[" * 50_000, 1)
                                                                   for r in rows[1:]]).encode()),
        "csv-binary": ("mismatches.csv", bytes(range(256)) * 8),
        "journal-empty": ("cases.jsonl", b""),
        "journal-binary": ("cases.jsonl", bytes(range(256)) * 8),
    }
    for name, (file, data) in edits.items():
        if data == (base / file).read_bytes():
            raise RuntimeError(f"the explain family's edit {name} leaves {file} as it was")
        folder = ws.root / "explains" / name
        if not folder.exists():
            shutil.copytree(base, folder)
        (folder / file).write_bytes(data)
        yield Trial("explain", name, [Step(["explain", str(folder)], statuses=OK_STATUSES | CLEAR)])


def environment(ws: Workspace) -> Iterator[Trial]:
    """A hostile environment: ASCII-only output, the cache a file, a dangling link or a loop, the
    step summary a folder or a FIFO, ``--known`` a FIFO: a run or one line, never a hang."""
    path = ws.write("corpora/environment.jsonl", "\n".join(corpus_lines(5)) + "\n")
    ws.write("a-file", "x")
    for name, target in (("dangling", ws.root / "nowhere"), ("loop", ws.root / "cache-loop")):
        link = ws.root / f"cache-{name}"
        if not link.is_symlink():
            link.symlink_to(target)
    fifo = ws.root / "a-fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    (ws.root / "a-folder").mkdir(exist_ok=True)
    run = compare("-c", str(path), "-b", "ref")
    yield Trial("environment", "ascii-output", [Step(run, statuses=OK_STATUSES)], out="out", cases=5,
                env={"PYTHONIOENCODING": "ascii"})
    for name in ("a-file", "cache-dangling", "cache-loop"):
        yield Trial("environment", f"cache-{name.removeprefix('cache-')}", [Step(["zoo", "path", MODEL], statuses=CLEAR)],
                    env={"TOKPARITY_CACHE": str(ws.root / name)})
    for name in ("a-folder", "a-fifo"):
        yield Trial("environment", f"step-summary-{name.removeprefix('a-')}", [Step(run, statuses=OK_STATUSES)],
                    out="out", cases=5, env={"GITHUB_STEP_SUMMARY": str(ws.root / name)})
    yield Trial("environment", "known-fifo", [Step(compare("-c", str(path), "-b", "ref", "--known", str(fifo)),
                                                   statuses=CLEAR)])


# A model repository as someone else made it, for the families below: Qwen3's tokenizer files, with
# its own chat template or the one given.
LOOP = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
# Modules named like the libraries tokparity and its children import: each leaves a mark if it runs.
PLANTED = ("json", "jinja2", "tokenizers", "regex", "numpy", "transformers", "sentencepiece", "venv", "pip")
MARKS = [f"marks/RAN-{name}" for name in PLANTED]
SECRET = "campaign-secret-5e1f"


def _repository(ws: Workspace, name: str, template: str | None = None) -> Path:
    folder = ws.root / name
    if not folder.exists():
        folder.mkdir(parents=True)
        shutil.copyfile(_zoo_file("tokenizer_json", "qwen3"), folder / "tokenizer.json")
        config = json.loads(_zoo_file("tokenizer_config", "qwen3").read_text("utf-8"))
        if template is not None:
            config["chat_template"] = template
        (folder / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    return folder


def folder(ws: Workspace) -> Iterator[Trial]:
    """The current folder and the model folder as weapons: a model repository whose ``json.py`` or
    ``tokenizers.py`` would run in tokparity's children when it runs there; links out of the model
    folder to the environment and to a secret file; ``--junit`` and the step summary aimed at the
    model's files and the cache's key; a resume after the template changed."""
    (ws.root / "marks").mkdir(exist_ok=True)
    planted = _repository(ws, "planted")
    for name in PLANTED:
        ws.write(f"planted/{name}.py", f"open({str(ws.root / 'marks' / ('RAN-' + name))!r}, 'w').close()\n"
                                       f"raise ImportError('a planted {name}.py')\n")
    texts = ws.write("corpora/folder.jsonl", "\n".join(corpus_lines(6)) + "\n")
    ws.write("pyengine/hostile_py_engine.py", PY_ENGINE)
    runs = {
        "chat": ["compare", ".", "--ops", "chat", "-b", "hf", "-o", "../out", "-q"],
        "jobs": ["compare", ".", MODEL, "-c", str(texts), "-b", "ref", "-j", "2", "-o", "../out", "-q"],
        "py-engine": ["compare", ".", "-c", str(texts), "-b", f"py:{ws.root / 'pyengine' / 'hostile_py_engine.py'}:good",
                      "-o", "../out", "-q"],
        "fuzz-chat": ["fuzz", ".", "--ops", "chat", "--seconds", "5", "-o", "../out", "-q"],
        "regress-update": ["regress", "--update", ".", "-c", "chats", "--goldens", "../goldens", "-q"],
        "release": ["compare", ".", "-c", str(texts), "-b", "hf@0.21.4", "-o", "../out", "-q"],
    }
    for name, argv in runs.items():
        yield Trial("folder", f"modules-{name}", [Step(argv, cwd=planted.name, limit=300)], never=MARKS)

    ws.write("outside/secret.json", json.dumps({"chat_template": SECRET}))
    (ws.root / "outside" / "templates").mkdir(exist_ok=True)
    ws.write("outside/templates/tool_use.jinja", SECRET)
    links = {"chat_template.jinja": "/proc/self/environ", "special_tokens_map.json": "/proc/self/environ",
             "tokenizer_config.json": str(ws.root / "outside" / "secret.json"),
             "additional_chat_templates": str(ws.root / "outside" / "templates")}
    for name, target in links.items():
        linked = _repository(ws, f"linked-{name.split('.')[0]}")
        if (linked / name).exists() and not (linked / name).is_symlink():
            (linked / name).unlink()
        if not (linked / name).is_symlink():
            (linked / name).symlink_to(target)
        yield Trial("folder", f"link-{name}", [Step(["compare", str(linked), "--ops", "chat", "-b", "hf", "-o", "out",
                                                     "-q"], statuses=CLEAR)], out="out", secret=SECRET)

    victim = _repository(ws, "victim")
    ws.write("victim/chat_template.jinja", "{{ messages[0]['content'] }}")
    ws.write("cache/journal-key", "k" * 64)
    onto = {"junit-template": (["--junit", "victim/chat_template.jinja"], {}),
            "junit-config": (["--junit", "victim/tokenizer_config.json"], {}),
            "junit-cache-key": (["--junit", "cache/journal-key"], {"TOKPARITY_CACHE": str(ws.root / "cache")}),
            "step-summary-config": ([], {"GITHUB_STEP_SUMMARY": str(victim / "tokenizer_config.json")})}
    for name, (extra, env) in onto.items():
        yield Trial("folder", f"output-onto-{name}",
                    [Step(["compare", str(victim), "-c", str(texts), "-b", "ref", "-o", "out", "-q", *extra],
                          statuses=CLEAR)], env=env, untouched=["victim/chat_template.jinja",
                                                                "victim/tokenizer_config.json", "cache/journal-key"])

    changing = _repository(ws, "changing", "{% for m in messages %}{{ m['content'] }}{% endfor %}")
    config = json.loads((changing / "tokenizer_config.json").read_text("utf-8"))

    def edit_template() -> None:
        (changing / "tokenizer_config.json").write_text(json.dumps({**config, "chat_template": "{{ 'other' }}"}),
                                                        "utf-8")

    def restore_template() -> None:
        (changing / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")

    run = ["compare", str(changing), "--ops", "chat", "-b", "hf", "-o", "out", "-q"]
    yield Trial("folder", "resume-after-the-template-changed",
                [Step(run, prepare=restore_template, statuses=OK_STATUSES | {130}, kill=(signal.SIGINT, 6, 5.0)),
                 Step(["compare", "--resume", "out", "-q"], prepare=edit_template, statuses=CLEAR)], out="out")


def goldens(ws: Workspace) -> Iterator[Trial]:
    """A goldens file edited to name a program where ``--update`` writes a built-in backend: a
    command, a ``py:`` file, a label, a release to install, as an oracle, the decoder or the prompts'
    encoder. Each is refused in one line before anything runs."""
    import gzip

    base = ws.root / "goldens-base"
    if not base.exists():
        made = subprocess.run([sys.executable, "-m", "tokparity", "regress", "--update", MODEL, "-c", "edge",
                               "--goldens", str(base), "-q"], cwd=ws.root, capture_output=True, timeout=300,
                              env=_env(ws, {}, "goldens-base"))
        if made.returncode != 0:  # (the campaign's own set-up: loud, not a trial)
            raise RuntimeError(f"the goldens family's base goldens failed (exit {made.returncode}): "
                               f"{made.stderr.decode('utf-8', 'replace')[-500:]}")
    with gzip.open(base / f"{MODEL}.jsonl.gz", "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    mark = str(ws.root / "marks" / "PWNED")
    (ws.root / "marks").mkdir(exist_ok=True)
    evil = ws.write("evil/evil.py", f"open({mark!r}, 'w').close()\ndef encode(text, a, p):\n    return []\n")
    header = lines[0]
    edits: dict[str, tuple[list[dict], str]] = {
        "oracle-cmd": ([{**header, "oracles": {**header["oracles"], "plain": ["cmd:touch " + mark]}}, *lines[1:]],
                       "encode"),
        "oracle-py": ([{**header, "oracles": {**header["oracles"], "add_special": [f"py:{evil}:encode"]}},
                       *lines[1:]], "encode"),
        "oracle-labelled": ([{**header, "oracles": {**header["oracles"], "plain": ["x=cmd:touch " + mark]}},
                             *lines[1:]], "encode"),
        "oracle-release": ([{**header, "oracles": {**header["oracles"], "plain": ["hf@0.0.1"]}}, *lines[1:]],
                           "encode"),
        "decoder-cmd": ([*lines, {"decoding": {"decoder": "cmd:touch " + mark, "version": "1",
                                               "pieces_sha256": None}}], "pieces"),
        "encoder-py": ([*lines, {"corpus": "planted", "cases": 0, "texts_sha256": "", "ids_sha256": "",
                                 "per_case": True, "prompts": {"encoder": f"py:{evil}:encode"}}], "encode"),
    }
    for name, (edited, ops) in edits.items():
        folder = ws.root / "goldens-edited" / name
        folder.mkdir(parents=True, exist_ok=True)
        with gzip.open(folder / f"{MODEL}.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.writelines(json.dumps(line) + "\n" for line in edited)
        yield Trial("goldens", name, [Step(["regress", MODEL, "--goldens", str(folder), "--ops", ops, "-o", "out",
                                            "-q"], statuses=CLEAR, limit=120)], never=["marks/PWNED"])


def empty(ws: Workspace) -> Iterator[Trial]:
    """Runs that compare nothing: an empty corpus, a chat template that raises on every conversation
    or never compiles, one that is only spaces. Each is exit 2 in one line, never ✅."""
    blank = ws.write("corpora/empty.jsonl", "")
    yield Trial("empty", "empty-corpus", [Step(compare("-c", str(blank), "-b", "ref"), statuses=CLEAR)])
    templates = {"raises": "{{ raise_exception('no') }}", "never-compiles": "{% if %}x", "spaces": "  \n"}
    for name, template in templates.items():
        model = _repository(ws, f"template-{name}", template)
        yield Trial("empty", f"template-{name}", [Step(["compare", str(model), "--ops", "chat", "-b", "hf", "-o",
                                                        "out", "-q"], statuses=CLEAR)])


FAMILIES: dict[str, Callable[[Workspace], Iterator[Trial]]] = {
    "arguments": arguments, "corpora": corpora, "engines": engines, "models": models, "journals": journals,
    "signals": signals, "outputs": outputs, "writers": writers, "bombs": bombs, "explain": explains,
    "environment": environment, "folder": folder, "goldens": goldens, "empty": empty,
}


def _catastrophic_known() -> str:
    """An entry whose text regex backtracks forever on the corpus' 'aaa…a!' case; it names every
    class so that the regex is reached whatever class the engine's mismatch gets."""
    import tomllib
    from importlib import resources

    classes = list(tomllib.loads(resources.files("tokparity.diff").joinpath("classes.toml").read_text("utf-8")))
    return ('[[divergence]]\nid = "evil"\nmodels = ["*"]\nbackends = ["*"]\n'
            f'classes = {json.dumps(classes)}\ntext = \'(a|a)+$\'\nreason = "backtracks"\nupstream = "none"\n')


def _zoo_file(role: str, model: str = MODEL) -> Path:
    from tokparity.zoo import resolve_model

    return resolve_model(model).files[role]


# ---------------------------------------------------------------------------------------------
# running and judging


def _env(ws: Workspace, extra: dict[str, str], token: str) -> dict[str, str]:
    env = {**os.environ, **extra, MARK: token}
    env.pop("TOKPARITY_CAMPAIGN_OUT", None)
    return env


def marked_processes(token: str) -> list[int]:
    """Live processes whose environment carries this trial's mark (zombies have none)."""
    needle = f"{MARK}={token}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _journal_lines(path: Path) -> int:
    try:
        return (path / JOURNAL).read_bytes().count(b"\n")
    except OSError:
        return 0


def run_step(step: Step, ws: Workspace, out: Path | None, env: dict[str, str]
             ) -> list[tuple[int | None, str, str]]:
    """Run one command (``step.copies`` of it at once): for each, its status (None if it hung: its
    process group is then killed), stdout and stderr."""
    with tempfile.TemporaryDirectory() as capture:
        procs: list[tuple[subprocess.Popen, Any, Any]] = []
        try:
            return _run_copies(step, ws, out, env, Path(capture), procs)
        finally:
            for proc, so, se in procs:  # (stopped already, unless the campaign itself was stopped or failed)
                if proc.returncode is None:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except OSError:
                        pass
                    proc.wait()
                so.close()
                se.close()


def _run_copies(step: Step, ws: Workspace, out: Path | None, env: dict[str, str], capture: Path,
                procs: list[tuple[subprocess.Popen, Any, Any]]) -> list[tuple[int | None, str, str]]:
    for k in range(step.copies):
        so, se = open(capture / f"{k}.out", "w+b"), open(capture / f"{k}.err", "w+b")
        try:
            proc = subprocess.Popen([sys.executable, "-P", "-m", "tokparity", *step.argv],
                                    cwd=ws.root / step.cwd if step.cwd else ws.root, env=env,
                                    stdin=subprocess.PIPE, stdout=so, stderr=se, start_new_session=True)
        except OSError:
            so.close()
            se.close()
            raise
        proc.stdin.write(step.stdin)  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
        procs.append((proc, so, se))
    deadline = time.monotonic() + step.limit
    if step.kill and out is not None:
        sig, lines, seconds = step.kill
        at = min(deadline, time.monotonic() + seconds)
        proc = procs[0][0]
        while _journal_lines(out) < lines and proc.poll() is None and time.monotonic() < at:
            time.sleep(0.02)
        if proc.poll() is None:
            os.kill(proc.pid, sig)
    results = []
    for proc, so, se in procs:
        try:
            status: int | None = proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            status = None
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
        so.seek(0)
        se.seek(0)
        results.append((status, so.read().decode("utf-8", "replace"), se.read().decode("utf-8", "replace")))
    return results


def _one_clear_line(stderr: str) -> bool:
    errors = [line for line in stderr.splitlines() if line.strip()]
    return len(errors) == 1 and errors[0].startswith("tokparity: error: ")


def _cases_in_journal(out: Path) -> tuple[int, int, int]:
    """(distinct cases, records, distinct records) in a journal: a case judged by several ops has a
    record per op; a record written twice shows as records > distinct records."""
    cases, seen, records = set(), set(), 0
    try:
        lines = (out / JOURNAL).read_bytes().split(b"\n")[1:]
    except OSError:
        return 0, 0, 0
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and "n" in rec:
            records += 1
            case = (json.dumps(rec.get("model")), rec.get("n"))
            cases.add(case)
            seen.add((*case, rec.get("op")))
    return len(cases), records, len(seen)


def judge(trial: Trial, ws: Workspace) -> Verdict:
    token = uuid.uuid4().hex
    env = _env(ws, trial.env, token)
    out = ws.root / trial.out if trial.out else None
    problems: list[str] = []
    notes: list[str] = []
    statuses: list[int] = []
    stderr_all = ""
    start = time.monotonic()
    before = {name: _bytes(ws.root / name) for name in trial.untouched}
    if None in before.values():  # (a watch on a file that is not there could never fail)
        raise RuntimeError(f"{trial.family}/{trial.name}: a file it watches is missing: "
                           f"{[name for name, data in before.items() if data is None]}")
    if trial.secret is not None:
        env["CAMPAIGN_SECRET"] = trial.secret
    for step in trial.steps:
        if step.prepare is not None:
            step.prepare()
        results = run_step(step, ws, out, env)
        hung = False
        if step.copies > 1 and not any(status in OK_STATUSES for status, _, _ in results):
            problems.append(f"refused: none of the {step.copies} copies ran (one of them must)")
        ran = any(status in OK_STATUSES for status, _, _ in results)
        for status, stdout, stderr in results:
            stderr_all += stderr
            if status is None:
                problems.append(f"hang: `{' '.join(step.argv[:3])} …` still running after {step.limit:g} s")
                hung = True
                continue
            statuses.append(status)
            if trial.secret is not None and trial.secret in stdout + stderr:
                problems.append("published: the secret is in the terminal output")
            if TRACEBACK in stdout or TRACEBACK in stderr:
                problems.append("traceback: " + stderr.strip().splitlines()[-1][:300] if stderr.strip() else "traceback")
            if status not in step.statuses:
                problems.append(f"status: exit {status}, allowed {sorted(step.statuses)}")
            elif status == 2 and not _one_clear_line(stderr):
                problems.append(f"status: exit 2 without one 'tokparity: error:' line: {stderr.strip()[:300]!r}")
        if hung:
            _kill_all(marked_processes(token))  # killed with SIGKILL, it could not stop its engines
            break
        time.sleep(0.3)  # a process that is merely slow to go is not an orphan
        if left := marked_processes(token):
            if step.kill and step.kill[0] == signal.SIGKILL:
                # A process killed with SIGKILL cannot stop its engines: an engine that reads its
                # input sees EOF and goes, one that hangs stays. Counted apart, not hidden.
                notes.append(f"left after SIGKILL: {len(left)} process(es): {_describe(left)}")
            else:
                problems.append(f"orphan: {len(left)} process(es) left: {_describe(left)}")
            _kill_all(left)
    for name, data in before.items():
        if _bytes(ws.root / name) != data:
            problems.append(f"clobbered: {name} was changed by the run")
    for name in trial.never:
        if (ws.root / name).exists():
            problems.append(f"ran: {name} was left by a planted program")
            (ws.root / name).unlink()
    if trial.secret is not None and out is not None and out.is_dir():
        for path in out.rglob("*"):
            if path.is_file() and not path.is_symlink() and trial.secret.encode() in path.read_bytes():
                problems.append(f"published: the secret is in {path.relative_to(ws.root)}")
    if out is not None and trial.cases is not None and ran:  # (the last step's run, or a copy of it that ran)
        distinct, records, distinct_records = _cases_in_journal(out)
        if distinct != trial.cases or records != distinct_records:
            problems.append(f"lost: journal holds {distinct} distinct cases in {records} records "
                            f"({distinct_records} distinct), expected {trial.cases}")
    return Verdict(BAD if problems else HELD, problems, statuses, round(time.monotonic() - start, 2),
                   stderr_all[-2000:], notes)


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _describe(pids: list[int]) -> str:
    names = []
    for pid in pids[:3]:
        try:
            names.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120])
        except OSError:
            names.append(str(pid))
    return "; ".join(names)


def run_campaign(families: list[str], out_dir: Path, log: Callable[[str], None] = print) -> Counter:
    counts: Counter = Counter()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tokparity-campaign-") as tmp, \
            open(out_dir / "campaign.jsonl", "w", encoding="utf-8") as results:
        ws = Workspace(Path(tmp))
        ws.write("engine.py", ENGINE)
        for family in families:
            for trial in FAMILIES[family](ws):
                verdict = judge(trial, ws)
                counts[(family, verdict.kind)] += 1
                for problem in verdict.problems:
                    counts[(family, problem.split(":", 1)[0])] += 1
                counts[(family, "left after SIGKILL")] += bool(verdict.notes)
                results.write(json.dumps({"family": family, "trial": trial.name, "kind": verdict.kind,
                                          "problems": verdict.problems, "statuses": verdict.statuses,
                                          "seconds": verdict.seconds, "notes": verdict.notes,
                                          "stderr": verdict.stderr if verdict.problems else ""}) + "\n")
                results.flush()
                mark = "ok " if verdict.kind == HELD else "BAD"
                log(f"{mark} {family}/{trial.name} exit {verdict.statuses} {verdict.seconds:.1f}s "
                    + "; ".join(verdict.problems + verdict.notes))
                if out_dir != Path(tmp):
                    _clean(ws, trial)
    return counts


def _clean(ws: Workspace, trial: Trial) -> None:
    for name in ("out", "fz", "goldens"):
        shutil.rmtree(ws.root / name, ignore_errors=True)


PROBLEMS = ("traceback", "hang", "orphan", "lost", "status", "clobbered", "ran", "published")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.robustness.campaign",
                                     description="Hostile inputs and situations against the tokparity command line.")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES),
                        help="only this family (repeatable; default: all)")
    parser.add_argument("-o", "--out", type=Path, default=Path("reports/hostile-campaign"))
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    families = args.family or list(FAMILIES)
    counts = run_campaign(families, args.out)
    print(f"{'family':<10} {'trials':>7} {'held':>6} " + " ".join(f"{p:>9}" for p in PROBLEMS))
    for family in families:
        trials = counts[(family, HELD)] + counts[(family, BAD)]
        print(f"{family:<10} {trials:>7} {counts[(family, HELD)]:>6} "
              + " ".join(f"{counts[(family, p)]:>9}" for p in PROBLEMS))
    left = sum(counts[(f, "left after SIGKILL")] for f in families)
    if left:
        print(f"{left} trials killed with SIGKILL left an engine running (killed by the campaign): a process "
              "killed so cannot stop its children")
    bad = sum(counts[(f, BAD)] for f in families)
    print(f"{bad} bad trials; details in {args.out / 'campaign.jsonl'}" if bad else "0 bad trials")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
