"""The mutation suite's shared parts: engines with one planted bug, the corpora that show it, and
the checks a diagnosis must pass.

A ``Mutation`` is an engine with exactly one deviation from the model (``bug``), the same engine
with it switched off (``twin``), the zoo model and corpus on which the deviation shows, and the
root cause the diagnosis must name. Each test module lists its mutations; ``compare_runs`` runs
the real ``run_compare`` once per (model, corpus, flags), every engine and twin of the module as
``cmd:`` backends side by side, and the checks read the run's ``Mismatch.cause`` and the
summary's ``root_cause``:

* the twin agrees with the oracle on every case (so what the bug engine does differently is the
  bug, and nothing of the harness);
* at least 95 % of the bug engine's mismatches carry exactly the cause (a composition: a part of
  it, and the whole where both parts show);
* the run's root cause names it, and (for a planted bug) keeps every agreeing case agreeing.

The engines (tests/engines) are real libraries with one setting changed wherever one can carry
the bug: SentencePiece with a ModelProto field flipped, tokenizers with a tokenizer.json edited,
llama.cpp with a flag forced or a GGUF key overridden, transformers' BertTokenizer with its
normalizer options set. They were not written against tokparity's reference, so the diagnosis
is judged on behaviour it did not see.

Every check prints one ``MUTATION`` line (cause, engine, model, mismatches, share with the cause)
so ``pytest -s tests/diagnose | grep MUTATION`` gives the suite's table.
"""

from __future__ import annotations

import itertools
import json
import shlex
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
from evidence import contradictions, reproducer

from tokparity.corpus import load_corpus
from tokparity.diagnose.search import Diagnoser
from tokparity.records import Mismatch, RootCause
from tokparity.reference import reference_of
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions
from tokparity.run.results import Results, RunSummary
from tokparity.vocab import load_vocab
from tokparity.zoo import resolve_model

ENGINES = Path(__file__).resolve().parents[1] / "engines"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "engines"  # the README's demo engines
SHARE = 0.95  # of a bug engine's mismatches that must carry its cause


def engine(script: str, *args: str) -> str:
    """A ``cmd:`` backend running ``tests/engines/<script>`` (or ``examples/engines/<script>``) with
    ``args`` (``{gguf}`` & co. are left for tokparity to fill in; everything else is quoted)."""
    words = [a if a.startswith("{") and a.endswith("}") else shlex.quote(a) for a in args]
    path = ENGINES / script if (ENGINES / script).exists() else EXAMPLES / script
    return " ".join(["cmd:{python}", shlex.quote(str(path)), *words])


@dataclass(frozen=True)
class Mutation:
    cause: str  # the root cause the diagnosis must name ("a+b" for a composition)
    model: str
    bug: str  # the backend with the deviation
    twin: str | None  # the same engine with it switched off (None: there is no bug to switch off)
    corpora: tuple[str, ...]  # committed corpus names, or "focus:NAME" (FOCUS below)
    add_special: bool = False
    parse_special: bool = False
    at_least: int = 10  # mismatches the bug must show on this corpus

    @property
    def group(self) -> tuple:
        return self.model, self.corpora, self.add_special, self.parse_special


def param(m: Mutation, id: str):
    return pytest.param(m, id=id)


# --- focused corpora --------------------------------------------------------------------------------


def _records(items: Iterable[tuple[str, str]]) -> list[dict]:
    return [{"id": case_id, "text": text, "tags": {}} for case_id, text in items]


def _committed(name: str, keep: Callable[[dict], bool]) -> list[dict]:
    return [{"id": c.id, "text": c.text, "tags": dict(c.tags)} for c in load_corpus(name)
            if keep({"id": c.id, "text": c.text, "tags": c.tags})]


def prose(_zoo) -> list[dict]:
    """The multilingual corpus without its code and mixed texts."""
    return _committed("multilingual", lambda c: c["tags"].get("kind") == "prose")


def cased_prose(_zoo) -> list[dict]:
    """Prose in scripts with case (Latin, Cyrillic, Greek) and the edge corpus's plain ASCII,
    contractions, digits and punctuation: where an uncased BERT vocabulary is used as written."""
    out = _committed("multilingual", lambda c: c["tags"].get("kind") == "prose"
                     and c["tags"].get("script") in ("Latn", "Cyrl", "Grek"))
    groups = ("ascii-", "contractions-", "digits-", "punctuation-")
    return out + _committed("edge", lambda c: c["id"].startswith(groups))


def decomposed_prose(zoo) -> list[dict]:
    """Multilingual prose in NFD, every accent a combining mark."""
    return [{**r, "id": r["id"] + "-nfd", "text": unicodedata.normalize("NFD", r["text"])} for r in prose(zoo)]


def nfkc_changes(_zoo) -> list[dict]:
    """Every assigned character that NFKC changes, between two letters."""
    chars = [chr(cp) for cp in range(0xA0, 0x30000)
             if unicodedata.category(chr(cp)) not in ("Cs", "Co", "Cn")
             and unicodedata.normalize("NFKC", chr(cp)) != chr(cp)]
    return _records((f"U+{ord(c):04X}", f"x{c}y") for c in chars)


def llama_specials(_zoo) -> list[dict]:
    """Llama's special tokens in plain text, with and without text and spaces around them."""
    before = ["", "Hello", "Hi ", "\n", "x"]
    after = ["world", " there", "\tTab", "", "!", "  two"]
    return _records((f"sp-{i}-{j}-{k}", f"{b}{s}{a}") for i, b in enumerate(before)
                    for j, s in enumerate(["<s>", "</s>", "<unk>"]) for k, a in enumerate(after))


UNUSUAL_SPACES = ["\x0b", "\x0c", "\x85", "\xa0", "\u1680", "\u2000", "\u2003", "\u2028", "\u2029", "\u202f",
                  "\u205f", "\u3000", "\ufeff", "\x1c", "\x1f", "\u180e", "\u200b"]


def unicode_spaces(_zoo) -> list[dict]:
    """Each code point some regex engine reads as \\s and another does not, once and twice,
    between words, digits, punctuation, spaces and newlines."""
    sides = ["word", "12", "!", " ", "\n", "", "x "]
    return _records((f"sp-{i}-{a}{b}{n}", left + sp * n + right) for i, sp in enumerate(UNUSUAL_SPACES)
                    for a, left in enumerate(sides) for b, right in enumerate(sides) for n in (1, 2))


UNICODE16_DIGITS = [chr(c) for c in [*range(0x10D40, 0x10D4A), *range(0x116D0, 0x116E4)]]


def unicode16_digits(_zoo) -> list[dict]:
    """The digits Unicode 16.0 added (Garay, Myanmar Extended-C) in short texts."""
    ds = UNICODE16_DIGITS
    return _records((f"u16-{i}-{j}", t) for i, d in enumerate(ds) for j, t in enumerate(
        [f"Digit {d} here", f"x {d}{d}", f"{d} {d}", f"A {d}.", f"page {d}{ds[(i + 1) % len(ds)]}{d} end"]))


def digit_runs(_zoo) -> list[dict]:
    """Runs of one digit, and round numbers: where a unigram model's segmentations tie."""
    runs = [(f"run-{d}-{k}", d * k) for d in "0123456789" for k in range(1, 25)]
    return _records(runs + [(f"num-{lead}-{k}", lead + "0" * k) for k in range(1, 13) for lead in "123456789"])


REPEATED = [".", "-", "=", "*", "#", "!", "?", "_", "~", "/", "0", "1", "9", "a", "e", "l", "o", "z", "A", " ", "\n", "\t",
            "\u00b7", "\u2014", "\u2026", "\u30fc", "\u54c8", "\u0430", "\u00e9", "\u00a0"]


def repeat_runs(_zoo) -> list[dict]:
    """Runs of one character, alone and between words: where a BPE model has several candidate
    pairs of equal priority ("..." holds the pair ".." twice), so the tie-breaking shows."""
    frames = ["{r}", "Wait{r}what", "x {r} y"]
    return _records((f"run-{i}-{k}-{j}", f.format(r=c * k)) for i, c in enumerate(REPEATED) for k in range(2, 17)
                    for j, f in enumerate(frames))


def whole_words(zoo) -> list[dict]:
    """Llama 3's words that are one token but that its merges would not build (`` Việt``): found
    with tokenizers itself (ignore_merges off) over the whole vocabulary."""
    from tokenizers import Tokenizer

    from tokparity.vocab.token_bytes import gpt2_unicode_to_byte

    config = json.loads(Path(zoo("llama-bpe").files["tokenizer_json"]).read_text("utf-8"))
    config["model"]["ignore_merges"] = False
    tok = Tokenizer.from_str(json.dumps(config))
    table = gpt2_unicode_to_byte()
    words = []
    for piece, i in sorted(tok.get_vocab().items(), key=lambda item: item[1]):
        try:
            words.append((i, bytes(table[c] for c in piece).decode("utf-8")))
        except (KeyError, UnicodeDecodeError):
            continue
    encoded = tok.encode_batch([w for _, w in words], add_special_tokens=False)
    found = [w for (i, w), e in zip(words, encoded) if e.ids != [i] and w.strip().isalpha()]
    return _records((f"word-{n}", f"1{w}!") for n, w in enumerate(found))


QWEN_TAGS = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>",
             "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|repo_name|>", "<|file_sep|>"]


def qwen_tags(_zoo) -> list[dict]:
    """Qwen 3's added tokens that are not special (matched in any text) inside prose."""
    frames = ["{t}", "Let me think.{t}", "{t}\nThe answer is 42.", "a{t}b", " {t} ", "Call {t}{{\"name\": \"f\"}}",
              "x = 1{t}y = 2"]
    return _records((f"tag-{i}-{j}", f.format(t=t)) for i, t in enumerate(QWEN_TAGS) for j, f in enumerate(frames))


PHI3_SPECIALS = ["<|user|>", "<|assistant|>", "<|end|>", "<|system|>", "</s>", "<|endoftext|>"]


def phi3_chat(_zoo) -> list[dict]:
    """Phi-3 chat turns: special tokens with newlines and spaces after them."""
    frames = ["{t}\nHello", "Hi{t} \n", "{t}  x", "a {t}\tb", "{t}\n\n{t}\nok", "Question?{t}\nAnswer."]
    return _records((f"chat-{i}-{j}", f.format(t=t)) for i, t in enumerate(PHI3_SPECIALS)
                    for j, f in enumerate(frames))


CHAT_SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>",
                 "<|reserved_special_token_0|>", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>",
                 "<start_of_turn>", "<end_of_turn>", "[INST]", "<mask>"]


def chat_specials(_zoo) -> list[dict]:
    """Special tokens of several model families in chat-like text."""
    frames = ["{t}", "{t}user\nHello{t}", "Say {t} please", "{t}\n\n", "a{t}b", " {t} "]
    return _records((f"chat-{i}-{j}", f.format(t=t)) for i, t in enumerate(CHAT_SPECIALS)
                    for j, f in enumerate(frames))


def unicode_32(_zoo) -> list[dict]:
    """The ``seams`` corpus's texts whose code point Unicode 3.2 puts in another class than
    Python's tables do (Unicode 14.0 on Python 3.11), where Python's class is llama.cpp's: an
    engine reading 3.2's tables splits them otherwise, one reading Python's does not."""
    from tokparity.diagnose.regex_engines import category

    def differs(record: dict) -> bool:
        ch = chr(int(record["id"].rsplit("U+", 1)[1], 16))
        python = category(ch, "python")
        return category(ch, "3.2") != python == category(ch, "llama.cpp")
    return _committed("seams", differs)


def llama3_mixed(_zoo) -> list[dict]:
    """Llama 3's special-token text beside digit runs and a zero-width space (U+200B): the three
    places where a split or a special-token match can go wrong, in one text."""
    specials = ["<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>"]
    return _records((f"mixed-{i}-{j}", f"{s}{digits} \u200bword") for i, s in enumerate(specials)
                    for j, digits in enumerate(["12345", " 2026", "7"]))


def c_strings(_zoo) -> list[dict]:
    """A NUL inside prose, at the start, the end and twice: where a C string's reading stops."""
    texts = ["Hello\x00world", "\x00leading", "trailing\x00", "two\x00NULs\x00here", "a\x00b c",
             "The quick\x00brown fox", "1\x002\x003", "Grüße\x00aus Köln", "日本\x00語", "tab\t\x00after"]
    return _records((f"nul-{i}", t) for i, t in enumerate(texts))


def llama3_reserved(_zoo) -> list[dict]:
    """Llama 3's special tokens whose names or ids another release of Llama changed, in text."""
    names = ["<|reserved_special_token_2|>", "<|reserved_special_token_3|>", "<|reserved_special_token_4|>",
             "<|finetune_right_pad_id|>", "<|eom_id|>", "<|python_tag|>", "<|reserved_special_token_240|>"]
    around = [("", ""), ("Hello ", " world"), ("x", "y"), ("\n", "\n")]
    return _records((f"reserved-{i}-{j}", f"{b}{name}{a}") for i, name in enumerate(names)
                    for j, (b, a) in enumerate(around))


def nul_bytes(_zoo) -> list[dict]:
    """A NUL after letters, punctuation, spaces and other NULs, where a lookup that loses trailing
    NUL bytes reads a piece as the bytes before them."""
    texts = ["a\x00b", "!\x00", " \x00", "end.\x00", ".\x00\x00x", "\x00\x00\x00", "x \x00 y", "12\x00",
             "Hello\x00world", "\x00", "(\x00)", "done,\x00 next", "\t\x00\n", "no NUL here"]
    return _records((f"nul-bytes-{i}", t) for i, t in enumerate(texts))


def whitespace_pieces(_zoo) -> list[dict]:
    """Runs of newlines, spaces and tabs and names that start longer names (``<unused1>0``), in
    code and prose: where Gemma 3's user-defined pieces (``\\n\\n``, ``▁▁``, tab runs) are matched
    whole or made by merges."""
    texts = ["\n\n", "a\n\nb", "  ", "x   y", "\t\t", "def f():\n\n    return 1", "<unused1>0", "a\u2581\u2581b",
             "\n\n\n", "line\n\n\n\nend", "no runs here", "tail  ", "\t\tindent\n\t\t\tdeeper",
             "if x:\n        y = 1\n\n\nz", "one  two   three    four", "<unused12><unused1>", "a\n\n\n\n\n\nb",
             "    four spaces", "\t\n\t\n", "end.\n\n", "two  spaces", "a  b  c", "     five", "x = 1  # note"]
    return _records((f"whitespace-pieces-{i}", t) for i, t in enumerate(texts))


def bom_texts(_zoo) -> list[dict]:
    """U+FEFF (a byte-order mark) at the start, inside a word, before a newline, code and
    punctuation, twice, and at the end: where a lookup that decodes byte strings as text drops a
    leading BOM."""
    texts = ["\ufeffHello", "a\ufeffb", "Hel\ufefflo", "\ufeff\n", "x\ufeff\ufeffy", "\ufeffusing System;",
             "\ufeff#include <stdio.h>", "\ufeff// comment", "\ufeffnamespace App", "1\ufeff2", "end.\ufeff",
             "(\ufeff)", " \ufeff word", "\ufeff\ufeff", "Grüße\ufeffaus Köln", "日本\ufeff語", "no BOM here"]
    return _records((f"bom-{i}", t) for i, t in enumerate(texts))


def scanner_rules(_zoo) -> list[dict]:
    """Where a split written by hand as a scanner departs from Llama 3's regex by one rule: spaces
    between line breaks, a tab before punctuation, a space outside ASCII before a word, a space
    before a number beyond ASCII, a run of spaces that mixes characters at the end; and beside
    them texts where it must not (a run that starts with a space, a tab before letters, U+3000),
    with punctuation, digits and blank lines that another model's whole split regex cuts otherwise
    (GPT-2's gives the tab and U+00A0 rules' ids too, and must lose on these)."""
    texts = ["\n \n", "x\n \ny", "a\n\t\nb", "end.\n  \nNext", "}\n    \n}", "<ul>\n \n<li>",
             '\t"fmt', "\t<meta", "\t(x)", "a\t-b", "key:\t[1, 2]", "\t'quoted'",
             "a\u00a0b", "word\u00a0in", "10\u00a0km away", "Mr.\u00a0Smith", "x\u00a0y z",
             " \n \n", 'x "fmt', "\tword", "\n\nx", "a\u3000b", "a\u2002b", "plain words", '"fmt', "(x)", "<meta",
             "12345", "1234567", "x\n\ny", "a.b", "end.\n\nNext", "(a)\n\n(b)",
             # a number beyond ASCII after a space, and the same where nothing may join them
             "a \u00bd", "step \u2460 then \u2461", "Chapter \u216b", "page 4 \u00bd", "x \U0001d7ce1", "a  \u00bd",
             "a 1", "! \u00bd", " \u00bd", "a\n \u00bd",
             # a run of spaces that mixes characters at the end, and runs that do not
             " \t", "a\t ", "hello \u00a0", "end. \t", "x\n \t", "   ", "\t\t", "a \tb", "a \u00a0b"]
    return _records((f"scanner-{i}", t) for i, t in enumerate(texts))


def inherited_names(_zoo) -> list[dict]:
    r"""JavaScript and prose where a split piece is named like a member of Object.prototype
    (``x.toString()``, a line that starts ``valueOf``, ``1constructor``), and the same names where
    no piece is (after a space: ``' toString'``; inside a longer word), for the engines that keep
    their ranks in a plain object; and a few seams of JavaScript's ``\s`` (U+0085, U+FEFF), which
    an engine written in JavaScript may read too."""
    texts = ["x.toString()", "a.hasOwnProperty(b)", "n.valueOf() + 1", "d.toLocaleString('de-DE')",
             "Object.prototype.isPrototypeOf(x)", "o.propertyIsEnumerable('k')", "obj.constructor.name",
             "toString", "valueOf()", "return a\ntoString(b)", "1toString", "(hasOwnProperty)",
             "if (!isPrototypeOf) {}", "[toLocaleString]", "{valueOf: 1}", "x.__proto__ = y",
             "o.__defineGetter__('a', f)", "a.__lookupSetter__('b')", "`${toString}`", "2valueOf",
             "\nhasOwnProperty(x)", "1propertyIsEnumerable", "(!hasOwnProperty)", "x=!toLocaleString()",
             "a;\ntoLocaleString", "0isPrototypeOf", "if (!propertyIsEnumerable) {}", "\r\nisPrototypeOf",
             "9toLocaleString", "[!hasOwnProperty]", "\nvalueOf", "2hasOwnProperty",
             # (JavaScript's \s, which a JavaScript engine may have too: no U+0085, U+FEFF a space)
             " \x85a", "x \x85toString", "  \ufeff", "a  \ufeffb", "n \x85\x85 m", "end \x85",
             "the toString method", "call toLocaleString on it", "toStringify(x)", "myvalueOf",
             "a constructor runs first", "no such names here", "String(x)", "x.tostring()"]
    return _records((f"inherited-{i}", t) for i, t in enumerate(texts))


def contraction_forms(_zoo) -> list[dict]:
    """Every case form of the seven English contractions ('s, 't, 're, 've, 'm, 'll, 'd: 'S, 'rE,
    'LL …) after a word and before more letters (``THEY'rEx``, where a split that lacks the form
    takes the letters into one piece with it), at a word's end, and the transposed spellings of
    're and 've ('eR, 'Ev …) before letters; then the edge corpus's contractions."""
    forms = ["'" + "".join(chars) for word in ("s", "t", "re", "ve", "m", "ll", "d")
             for chars in itertools.product(*((ch, ch.upper()) for ch in word))]
    misspelt = ["'" + "".join(chars) for word in ("er", "ev") for chars in itertools.product(*((ch, ch.upper()) for ch in word))]
    texts = [t for form in forms for t in (f"THEY{form}x", f"we{form}s done", f"Bob{form}Z", f"x{form}ing",
                                           f"IT{form}ERY", f"x{form}")]
    texts += [t for form in misspelt for t in (f"we{form}x", f"THEY{form}ing", f"x{form}s", f"Bob{form}on")]
    texts += ["the CAT'eRrand", "it'S fine", "WHO'D'VE", "y'ALL"]
    edge = _committed("edge", lambda c: c["id"].startswith("contractions-"))
    return _records((f"forms-{i}", t) for i, t in enumerate(texts)) + edge


FOCUS: dict[str, Callable] = {f.__name__.replace("_", "-"): f for f in (
    prose, cased_prose, decomposed_prose, nfkc_changes, llama_specials, unicode_spaces, unicode16_digits,
    digit_runs, repeat_runs, whole_words, qwen_tags, phi3_chat, chat_specials, unicode_32, llama3_mixed,
    c_strings, llama3_reserved, nul_bytes, whitespace_pieces, bom_texts, inherited_names, contraction_forms,
    scanner_rules)}


def corpus_paths(corpora: tuple[str, ...], folder: Path, zoo) -> list[str]:
    out = []
    for name in corpora:
        if not name.startswith("focus:"):
            out.append(name)
            continue
        path = folder / f"{name[6:]}.jsonl"
        if not path.exists():
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in FOCUS[name[6:]](zoo)), "utf-8")
        out.append(str(path))
    return out


# --- runs and checks --------------------------------------------------------------------------------


@dataclass
class Run:
    results: Results

    def summary(self, backend: str) -> RunSummary:
        return next(s for s in self.results.runs if s.backend == backend)

    def mismatches(self, backend: str) -> list[Mismatch]:
        return [m for m in self.results.mismatches if m.backend == backend]


def compare_runs(mutations: Iterable[Mutation], folder: Path, zoo) -> dict[tuple, Run]:
    """One ``run_compare`` per (model, corpus, flags), every engine and twin of the group in it."""
    groups: dict[tuple, list[str]] = {}
    for m in mutations:
        groups.setdefault(m.group, []).extend(b for b in (m.bug, m.twin) if b)
    runs = {}
    for (model, corpora, add_special, parse_special), backends in groups.items():
        zoo(model)
        options = CompareOptions(add_special=add_special, parse_special=parse_special, explicit_backends=True)
        results = run_compare([model], corpus_paths(corpora, folder, zoo), list(dict.fromkeys(backends)), options)
        runs[(model, corpora, add_special, parse_special)] = Run(results)
    return runs


def _label(backend: str) -> str:
    """``greedy_engine.py --no-escape`` for a cmd: backend (the script and its flags), else the name."""
    if not backend.startswith("cmd:"):
        return backend
    words = shlex.split(backend[4:])
    script = next((i for i, w in enumerate(words) if w.endswith(".py")), 0)
    return " ".join([Path(words[script]).name] + [w for w in words[script + 1:] if not w.startswith("{")])


_DIAGNOSERS: dict[tuple[str, bool, bool], Diagnoser] = {}


def check_evidence(m: Mutation, mismatches: list[Mismatch]) -> None:
    """No sentence of a row (its class's evidence, its cause's) contradicts the row's ids, and the
    variants it says reproduce the backend do (tests/diagnose/evidence.py)."""
    key = (m.model, m.add_special, m.parse_special)
    if key not in _DIAGNOSERS:
        _DIAGNOSERS.clear()  # (one model's reference at a time)
        _DIAGNOSERS[key] = Diagnoser(reference_of(load_vocab(resolve_model(m.model).primary[1])), m.add_special,
                                     m.parse_special)
    diagnoser = _DIAGNOSERS[key]
    false = [(x.case_id, said) for x in mismatches
             for said in contradictions(x, diagnoser.vocab, reproducer(diagnoser, x.text))]
    assert not false, f"{len(false)} false sentences, e.g. {false[:3]}"


def _report(run: Run, m: Mutation, mismatches: list[Mismatch], carrying: int) -> None:
    share = carrying / len(mismatches) if mismatches else 0.0
    root = run.summary(m.bug).root_cause
    verdict = f"root {root.cause}: {root.explains}/{root.mismatches}, keeps {root.keeps}/" \
              f"{root.agreements}" if root else "root none"
    print(f"MUTATION {m.cause} | {_label(m.bug)} | {m.model} | {len(mismatches)} | {carrying} ({share:.1%}) | "
          f"{verdict}")
    check_evidence(m, mismatches)


def _causes(mismatches: list[Mismatch]) -> Counter:
    return Counter(x.cause for x in mismatches)


def check_twin(run: Run, m: Mutation) -> None:
    if m.twin is None:
        return
    twin = run.mismatches(m.twin)
    assert not twin, f"the twin {m.twin} differs from the oracle on {len(twin)} cases, e.g. " \
                     f"{twin[0].case_id} {twin[0].text!r}: {_causes(twin)}"


def check_single(run: Run, m: Mutation, stage_level: bool = False) -> None:
    """One deviation: >= 95 % of the mismatches carry exactly ``m.cause``; the run's root cause
    names it (``stage_level``: a ``*.other`` cause reproduces no variant, so the run-level verdict,
    which ranks sets of variants, has none to name)."""
    mismatches = run.mismatches(m.bug)
    carrying = sum(x.cause == m.cause for x in mismatches)
    _report(run, m, mismatches, carrying)
    check_twin(run, m)
    assert len(mismatches) >= m.at_least, f"the bug shows on only {len(mismatches)} cases"
    assert carrying >= SHARE * len(mismatches), f"{carrying} of {len(mismatches)} carry {m.cause}: {_causes(mismatches)}"
    root = run.summary(m.bug).root_cause
    if stage_level:
        assert root is None, root
    else:
        assert root is not None and root.cause == m.cause, root
        assert root.explains >= SHARE * len(mismatches), root
        _check_keeps(root, m)


def _check_keeps(root: RootCause, m: Mutation) -> None:
    """A planted bug is the engine's only deviation, so the reference with the named cause gives
    the oracle's ids on every case where the engine agreed."""
    if m.twin is not None:
        assert root.keeps == root.agreements, root


def check_composition(run: Run, m: Mutation) -> None:
    """Two deviations: each mismatch's cause is the pair or one of its parts (a case where only
    one shows is reproduced by that one alone: the smallest set), >= 95 % of them; the pair itself
    is named on some; the run's root cause is the pair, reproducing >= 95 % of the mismatches."""
    parts = set(m.cause.split("+"))
    mismatches = run.mismatches(m.bug)
    within = sum(bool(x.cause) and set(x.cause.split("+")) <= parts for x in mismatches)
    _report(run, m, mismatches, within)
    check_twin(run, m)
    assert len(mismatches) >= m.at_least, f"the bugs show on only {len(mismatches)} cases"
    assert within >= SHARE * len(mismatches), f"{within} of {len(mismatches)} within {m.cause}: {_causes(mismatches)}"
    assert any(x.cause == m.cause for x in mismatches), _causes(mismatches)
    root = run.summary(m.bug).root_cause
    assert root is not None and root.cause == m.cause, root
    assert root.explains >= SHARE * len(mismatches), root
    _check_keeps(root, m)
