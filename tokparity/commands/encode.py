"""``tokparity encode MODEL TEXT [-b BACKEND]…``: one text on several backends, side by side.

    $ tokparity encode llama-spm "Hello world" -b llama.cpp -b golden
    llama-spm · 'Hello␣world' (11 chars) · add_special off · parse_special off

      [A] llama.cpp 0.3.36     15043   3186
                               ▁Hello  ▁world
      [A] golden               15043   3186
                               ▁Hello  ▁world

    all 2 backends agree (2 tokens)

Backends with the same ids share a letter; a backend that differs gets its own, and a line saying
where it first departs from the largest group. Whitespace and control characters are made
visible (``␣`` ``↵`` ``→`` ``<0x00>``), pieces are shown as the vocabulary stores them (``▁``,
``Ġ``). ``--json`` prints the same as one JSON object. Exit status: 0 when every backend that
answered agrees, 1 when they differ or one crashed, timed out or failed, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import cast

from tokparity.commands.arguments import BACKEND_NAMES, timeout_seconds
from tokparity.errors import TokparityError
from tokparity.textview import single_line, visible


def add_parser(sub) -> None:
    p = sub.add_parser(
        "encode", help="ids and pieces of one text on every backend, side by side",
        description="Encode TEXT with each backend and show ids and pieces side by side, agreement marked. "
                    "Without -b: every backend the model's files allow and whose library is installed.")
    p.add_argument("model", metavar="MODEL", help="zoo name, file, folder or hf:ORG/NAME")
    p.add_argument("text", metavar="TEXT", help="the text to encode ('-' reads it from stdin, exactly)")
    p.add_argument("-b", "--backend", action="append", dest="backends", metavar="BACKEND",
                   help=BACKEND_NAMES + " (repeatable); NAME=BACKEND shows it as NAME, e.g. "
                                        "'mine=cmd:python3 eng.py {gguf}'")
    p.add_argument("-e", "--escapes", action="store_true",
                   help=r"interpret \n \t \r \\ \xHH \uHHHH \UHHHHHHHH in TEXT")
    p.add_argument("--add-special", action="store_true", help="add BOS/EOS as the model says")
    p.add_argument("--parse-special", action="store_true", help="parse special-token text in the input")
    p.add_argument("--timeout", type=timeout_seconds, default=10.0, metavar="SECONDS",
                   help="per-case timeout for engines in a child process (default: 10)")
    p.add_argument("--isolate", action="store_true",
                   help="run native backends (llama.cpp, sentencepiece, ...) in a child process")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--trace", action="store_true",
                   help="also print how the reference (ref) got its ids: partition, normalization, "
                        "pre-tokenization and every merge or the Viterbi path")
    p.set_defaults(run=run)


_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))", re.S)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def unescape(text: str) -> str:
    r"""``"a\\nb" -> "a\nb"``; an unknown escape is kept as it is (``"\\q"`` stays two characters)."""
    def one(m: re.Match) -> str:
        hex_ = m.group(1) or m.group(2) or m.group(3)
        if hex_:
            code = int(hex_, 16)
            if code > 0x10FFFF:
                raise TokparityError(f"TEXT: {m.group(0)} is not a Unicode code point (they end at \\U0010FFFF); "
                                     "fix the escape")
            if 0xD800 <= code <= 0xDFFF:  # half of a UTF-16 pair: no UTF-8 for it, no tokenizer takes it
                raise TokparityError(f"TEXT: {m.group(0)} is a lone surrogate, not a character; write the "
                                     "character itself or its \\U escape")
            return chr(code)
        return _SIMPLE.get(m.group(4), m.group(0))
    return _ESCAPE.sub(one, text)


@dataclass
class Row:
    """One backend's line of the side-by-side view (or its object in ``--json``)."""

    name: str
    version: str = ""
    status: str = "ok"  # ok | crash | timeout | error | skipped | unavailable
    ids: list[int] = field(default_factory=list)
    pieces: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    detail: str = ""
    group: str = ""  # A, B, ... for backends that answered; "" otherwise
    first_diff: int | None = None  # vs the largest group


def default_backends(model) -> list[str]:
    from tokparity.backends.registry import backend_available, backends_for
    return [name for name in backends_for(model) if backend_available(name)]


def encode_all(model, text: str, names: list[str], *, add_special: bool, parse_special: bool, timeout: float,
               isolate: bool, explicit: bool) -> list[Row]:
    from tokparity.backends.registry import make_backend, split_label
    from tokparity.backends.runner import ask

    answers = []
    for name in names:
        label, spec = split_label(name)  # mine=cmd:… is shown as mine
        opts = {"timeout": timeout}
        if isolate and not spec.startswith(("cmd:", "py:")):
            opts["isolate"] = True
        try:
            backend = make_backend(name, model, **opts)
        except TokparityError as e:
            if explicit:
                raise
            answers.append(Row(label, status="unavailable", detail=str(e)))
            continue
        try:
            covers = getattr(backend, "covers", None)
            if not explicit and covers is not None and not covers(text, add_special):
                continue  # golden only knows its own texts; not worth a line unless asked for
            result = ask(backend, text, add_special, parse_special)
            row = Row(backend.name or name, backend.version, result.status, result.ids, notes=result.notes,
                      detail=result.detail)
            if result.status == "ok":
                try:
                    row.pieces = backend.pieces(result.ids)
                except Exception as e:  # ids the backend cannot name: show them without pieces
                    row.pieces = ["?"] * len(result.ids)
                    row.notes.append(f"pieces unavailable: {type(e).__name__}: {e}")
            answers.append(row)
        finally:
            backend.close()
    _group(answers)
    return answers


def _group(answers: list[Row]) -> None:
    """Letters by agreement, the largest group first; first differing index vs that group."""
    groups: dict[tuple[int, ...], list[Row]] = {}
    for a in answers:
        if a.status == "ok":
            groups.setdefault(tuple(a.ids), []).append(a)
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    for letter, (ids, members) in zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", ordered):
        for a in members:
            a.group = letter
    if len(ordered) > 1:
        base = ordered[0][0]
        for ids, members in ordered[1:]:
            first = next((i for i, (x, y) in enumerate(zip(base, ids)) if x != y), min(len(base), len(ids)))
            for a in members:
                a.first_diff = first


def _width(s: str) -> int:
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _pad(s: str, width: int) -> str:
    return s + " " * (width - _width(s))


def render_text(model_name: str, text: str, answers: list[Row], add_special: bool, parse_special: bool,
                columns: int | None = None) -> str:
    columns = columns or shutil.get_terminal_size((120, 24)).columns
    onoff = {True: "on", False: "off"}
    lines = [f"{model_name} · '{visible(text)}' ({len(text)} chars) · add_special {onoff[add_special]} · "
             f"parse_special {onoff[parse_special]}", ""]
    # (an engine's name, version, errors and notes are its own text: escaped, as compare's reports do)
    labels = {id(a): single_line(f"{a.name} {a.version}".strip()) for a in answers}
    label_w = min(max((_width(s) for s in labels.values()), default=0), 40)
    indent = 2 + 4 + label_w + 2
    groups = {a.group: a for a in reversed(answers) if a.group}
    for a in answers:
        label = labels[id(a)]
        if _width(label) > label_w:
            label = label[:label_w - 1] + "…"
        head = f"  [{a.group or '!'}] {_pad(label, label_w)}  "
        if a.status != "ok":
            lines.append(head + f"{a.status}: {single_line(a.detail)}")
            continue
        if not a.ids:
            lines.append(head + "(no tokens)")
        cells = [(str(i), visible(p)) for i, p in zip(a.ids, a.pieces)]
        row_ids: list[str] = []
        row_pieces: list[str] = []
        used = 0
        first_line = True
        for cid, cpiece in cells:
            w = max(_width(cid), _width(cpiece))
            if row_ids and indent + used + w > columns:
                lines.append((head if first_line else " " * indent) + " ".join(row_ids).rstrip())
                lines.append(" " * indent + " ".join(row_pieces).rstrip())
                row_ids, row_pieces, used, first_line = [], [], 0, False
            row_ids.append(_pad(cid, w))
            row_pieces.append(_pad(cpiece, w))
            used += w + 1
        if row_ids:
            lines.append((head if first_line else " " * indent) + " ".join(row_ids).rstrip())
            lines.append(" " * indent + " ".join(row_pieces).rstrip())
        if a.first_diff is not None:
            base = groups["A"]
            mine = f"{a.ids[a.first_diff]} {visible(a.pieces[a.first_diff])}" if a.first_diff < len(a.ids) else "end"
            theirs = (f"{base.ids[a.first_diff]} {visible(base.pieces[a.first_diff])}"
                      if a.first_diff < len(base.ids) else "end")
            lines.append(" " * indent + f"≠ A from token {a.first_diff}: here {mine}, A has {theirs}")
        for note in a.notes:
            lines.append(" " * indent + f"note: {single_line(note)}")
    lines.append("")
    ok = [a for a in answers if a.status == "ok"]
    failed = [a for a in answers if a.status not in ("ok", "skipped", "unavailable")]
    letters = sorted({a.group for a in ok})
    if ok and len(letters) == 1:
        lines.append(f"all {len(ok)} backends agree ({len(ok[0].ids)} tokens)" if len(ok) > 1
                     else f"only {ok[0].name} answered ({len(ok[0].ids)} tokens)")
    elif ok:
        lines.append(f"{len(letters)} different answers: " + " · ".join(
            f"{g} = {', '.join(a.name for a in ok if a.group == g)}" for g in letters))
    else:
        lines.append("no backend answered")
    if failed:
        lines.append(f"{len(failed)} failed: " + ", ".join(f"{a.name} ({a.status})" for a in failed))
    return "\n".join(lines)


def _text(given: str) -> str:
    """TEXT, or stdin's bytes for ``-``, as UTF-8; one line naming where it is not."""
    where, data = ("stdin", sys.stdin.buffer.read()) if given == "-" else ("TEXT", os.fsencode(given))
    try:
        return data.decode("utf-8")  # (stdin read as bytes: exactly, CR LF kept)
    except UnicodeDecodeError as e:
        raise TokparityError(f"{where} is not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}): give the text "
                             "in UTF-8, or spell the character with --escapes") from None


def run(args: argparse.Namespace) -> int:
    from tokparity.backends.registry import labelled
    from tokparity.zoo import resolve_model

    text = _text(args.text)
    if args.escapes:
        text = unescape(text)
    model = resolve_model(args.model)
    names = list(labelled(args.backends).values()) if args.backends else default_backends(model)
    if not names:
        raise TokparityError(f"model {model.name}: no backend can run on its files; name one with -b")
    answers = encode_all(model, text, names, add_special=args.add_special, parse_special=args.parse_special,
                         timeout=args.timeout, isolate=args.isolate, explicit=bool(args.backends))
    ok = [a for a in answers if a.status == "ok"]
    agree = len({a.group for a in ok}) <= 1
    failed = any(a.status not in ("ok", "skipped", "unavailable") for a in answers)
    unavailable = [a for a in answers if a.status == "unavailable"]
    if not ok and not failed and unavailable:  # nothing was compared: not a success (an empty GGUF)
        raise TokparityError(f"model {model.name}: no backend could load it; {unavailable[0].name}: "
                             f"{unavailable[0].detail}")
    if args.json:
        doc = {"model": model.name, "text": text, "add_special": args.add_special,
               "parse_special": args.parse_special, "agree": agree and not failed,
               "groups": {g: [a.name for a in ok if a.group == g] for g in sorted({a.group for a in ok})},
               "backends": [asdict(a) for a in answers]}
        out = json.dumps(doc, ensure_ascii=False, indent=1)
        try:
            out.encode(sys.stdout.encoding or "utf-8")
        except UnicodeEncodeError:  # a piece of invalid UTF-8 (a surrogate escape): \u escapes instead
            out = json.dumps(doc, indent=1)
        print(out)
    else:
        print(render_text(model.name, text, answers, args.add_special, args.parse_special))
    if args.trace:
        print_trace(model, text, args.add_special, args.parse_special, to=sys.stderr if args.json else sys.stdout)
    return 0 if agree and not failed else 1


def print_trace(model, text: str, add_special: bool, parse_special: bool, to) -> None:
    """The reference's own account of this text, step by step (with --json it goes to stderr,
    so stdout stays one JSON document)."""
    from tokparity.backends.ref import RefBackend
    from tokparity.backends.registry import make_backend

    ref = make_backend("ref", model)
    try:
        print(f"\ntrace of ref on {model.name}:", file=to)
        try:
            lines = cast(RefBackend, ref).trace(text, add_special, parse_special)
        except TimeoutError as e:  # a tokenizer.json regex that backtracks for ever (ref's table line says so too)
            lines = [f"no trace: {e}"]
        for line in lines:
            print(f"  {single_line(line)}", file=to)
    finally:
        ref.close()
