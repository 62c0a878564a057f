r"""tokparity's reference tokenizer on a byte-level BPE GGUF, with bugs planted by flags, as a
``cmd:`` engine (JSON-lines protocol: docs/contracts.md).

The engine runs ``tokparity.reference`` as it is, except the pre-tokenizer: the model's split
regexes (``tokparity.reference.pretokenize.REGEXES``, as llama.cpp names them) are spelled out
here with explicit character classes, read from llama.cpp's tables (``\p{L}`` is every code
point llama.cpp calls a letter, ``\s`` its 25 spaces), and run with Python's ``re``. Each flag
changes one class or one regex, the way a port to another language or engine gets it wrong:

    --space-class ecmascript|re2   ``\s`` / ``\S`` as that engine reads them (ECMAScript: no
                                   U+0085, U+FEFF included; RE2 / Go: ``[\t\n\f\r ]``)
    --letter-numbers-as-letters    letter numbers (Nl: Ⅻ, 〇) read as ``\p{L}``, not ``\p{N}``
    --digits N                     digit runs cut in groups of at most N (``\p{N}+`` and
                                   ``\p{N}{1,3}`` become ``\p{N}{1,N}``)
    --nfkc                         the text NFKC-normalized first (a normalizer the model has not)

With no flag it is the bug-free twin: the same ids as llama.cpp. The respelling is written here,
not imported from ``tokparity.diagnose``, so that the engine is not built from the diagnosis it
is tested against. A new planted bug is a function of ``PLANTS`` editing the classes, the
regexes or the text.

    python reference_engine.py MODEL.gguf --space-class ecmascript
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress

from tokparity.reference import RefTokenizer
from tokparity.reference import unicode as uc
from tokparity.reference.llama import LlamaBpe
from tokparity.reference.pretokenize import REGEXES
from tokparity.vocab import load_vocab

SPACE_CLASSES = {
    "ecmascript": [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F,
                   0x205F, 0x3000, 0xFEFF],
    "re2": [0x09, 0x0A, 0x0C, 0x0D, 0x20],
}
# The \p{..} a split regex may name -> the class it reads (llama.cpp reads \p{Lu} as every letter).
_PROPERTIES = {"L": "L", "Lu": "L", "Ll": "L", "Lt": "L", "Lm": "L", "Lo": "L", "N": "N", "M": "M", "P": "P", "S": "S"}
_FLAGS = {"L": uc.LETTER, "N": uc.NUMBER, "M": uc.ACCENT_MARK, "P": uc.PUNCTUATION, "S": uc.SYMBOL, "s": uc.WHITESPACE}


@dataclass
class Plan:
    """What the engine runs: the code points of each class, the split regexes, a text transform."""

    classes: dict[str, list[int]]
    regexes: list[str]
    transforms: list[Callable[[str], str]] = field(default_factory=list)


def llama_plan(pre_regexes: list[str]) -> Plan:
    table = uc.flag_table()
    classes = {name: list(compress(range(len(table)), map(flag.__and__, table))) for name, flag in _FLAGS.items()}
    return Plan(classes, list(pre_regexes))


# -- the planted bugs ------------------------------------------------------------------------------


def space_class(plan: Plan, engine: str) -> None:
    plan.classes["s"] = list(SPACE_CLASSES[engine])


def letter_numbers_as_letters(plan: Plan, _: object) -> None:
    letter_numbers = {cp for cp in plan.classes["N"] if unicodedata.category(chr(cp)) == "Nl"}
    plan.classes["N"] = [cp for cp in plan.classes["N"] if cp not in letter_numbers]
    plan.classes["L"] = sorted(set(plan.classes["L"]) | letter_numbers)


def digits(plan: Plan, n: int) -> None:
    edited = [re.sub(r"\\p\{N\}(\+|\{1,3\})", rf"\\p{{N}}{{1,{n}}}", r) for r in plan.regexes]
    if edited == plan.regexes:
        raise SystemExit(f"reference_engine: --digits: no digit run (\\p{{N}}+ or \\p{{N}}{{1,3}}) in {plan.regexes}")
    plan.regexes = edited


def nfkc(plan: Plan, _: object) -> None:
    plan.transforms.append(lambda text: unicodedata.normalize("NFKC", text))


PLANTS: dict[str, Callable[[Plan, object], None]] = {
    "space_class": space_class, "letter_numbers_as_letters": letter_numbers_as_letters, "digits": digits,
    "nfkc": nfkc}


# -- the split regexes, spelled with explicit classes ---------------------------------------------


def _escape(cp: int) -> str:
    return f"\\x{cp:02x}" if cp < 0x100 else (f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")


def class_body(cps: list[int]) -> str:
    """``[0x30, 0x31, 0x32, 0xB2]`` -> ``'\\x30-\\x32\\xb2'``: the inside of a character class."""
    out, cps, i = [], sorted(cps), 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        out.append(_escape(cps[i]) if i == j else f"{_escape(cps[i])}-{_escape(cps[j])}")
        i = j + 1
    return "".join(out)


def spell(source: str, bodies: dict[str, str]) -> str:
    """``source`` (ECMAScript syntax) with ``\\s``, ``\\S`` and ``\\p{..}`` written as explicit classes,
    and a final ``$`` (end of input in ECMAScript) as ``\\Z``."""
    out: list[str] = []
    inside, i = False, 0
    while i < len(source):
        c = source[i]
        if c == "\\" and source.startswith("\\p{", i):
            end = source.index("}", i)
            body = bodies[_PROPERTIES[source[i + 3:end]]]
            out.append(body if inside else f"[{body}]")
            i = end + 1
            continue
        if c == "\\" and i + 1 < len(source):
            esc = source[i:i + 2]
            if esc == "\\s":
                out.append(bodies["s"] if inside else f"[{bodies['s']}]")
            elif esc == "\\S" and not inside:
                out.append(f"[^{bodies['s']}]")
            else:
                out.append(esc)
            i += 2
            continue
        if c == "[" and not inside:
            inside = True
        elif c == "]" and inside:
            inside = False
        out.append(c)
        i += 1
    text = "".join(out)
    return text[:-1] + "\\Z" if text.endswith("$") and not text.endswith("\\$") else text


class Splitter:
    """The regexes applied in turn; each cuts every piece into its matches and the gaps between them."""

    def __init__(self, plan: Plan):
        bodies = {name: class_body(cps) for name, cps in plan.classes.items()}
        # re.ASCII: what llama.cpp leaves to the regex engine (\d, \w, case) is ASCII there too.
        self.patterns = [re.compile(spell(r, bodies), re.ASCII) for r in plan.regexes]

    def split(self, text: str) -> list[str]:
        spans = [(0, len(text))] if text else []
        for pattern in self.patterns:
            out = []
            for start, end in spans:
                pos = start
                for m in pattern.finditer(text, start, end):
                    if m.start() > pos:
                        out.append((pos, m.start()))
                    if m.end() > m.start():
                        out.append((m.start(), m.end()))
                    pos = m.end()
                if pos < end:
                    out.append((pos, end))
            spans = out
        return [text[a:b] for a, b in spans]


# -- the engine ----------------------------------------------------------------------------------


class Engine:
    def __init__(self, gguf: str, plants: dict[str, object]):
        self.tokenizer = RefTokenizer(load_vocab(gguf))
        pipeline = self.tokenizer.pipeline
        if not isinstance(pipeline, LlamaBpe):
            raise SystemExit(f"reference_engine: {gguf} is not a byte-level BPE GGUF (its pipeline is "
                             f"{type(pipeline).__name__}); the planted bugs are in the split regexes")
        plan = llama_plan(REGEXES[pipeline.pre.regexes])
        for name, value in plants.items():
            PLANTS[name](plan, value)
        pipeline.pretokenizer = Splitter(plan)  # type: ignore[assignment]
        pipeline.cache = {} if pipeline.cache is not None else None
        self.transforms = plan.transforms

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        for transform in self.transforms:
            text = transform(text)
        return self.tokenizer.encode(text, add_special, parse_special)

    def answer(self, req: dict) -> dict:
        if req.get("op") == "encode":
            return {"id": req["id"], "ids": self.encode(req["text"], bool(req.get("add_special")),
                                                        bool(req.get("parse_special")))}
        if req.get("op") == "decode":
            return {"id": req["id"], "text": self.tokenizer.decode(req["ids"], special=True)}
        return {"id": req.get("id"), "error": f"op {req.get('op')!r} not supported"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gguf")
    parser.add_argument("--space-class", choices=tuple(SPACE_CLASSES))
    parser.add_argument("--letter-numbers-as-letters", action="store_true")
    parser.add_argument("--digits", type=int, metavar="N")
    parser.add_argument("--nfkc", action="store_true")
    args = vars(parser.parse_args())
    gguf = args.pop("gguf")
    engine = Engine(gguf, {name: value for name, value in args.items() if value not in (None, False)})
    for line in sys.stdin:
        req = json.loads(line)
        try:
            reply = engine.answer(req)
        except Exception as e:  # one bad request: say so, keep serving
            reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
