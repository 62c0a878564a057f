"""The shape each cause explains: what an engine with that bug gives, on the zoo's texts.

    python -m tools.cause_shapes              # writes docs/_hooks/shapes.toml
    python -m tools.cause_shapes --check      # exit 1 where the file is not what the code gives

Each cause's variant is run as an engine would: an encoding variant of the reference encodes the
committed corpora, a decoding variant decodes their ids, a chat way renders the committed
conversations with the template of each zoo model that has one. Where its answer differs from the reference's, the
shape of that difference is read (tokparity.diff.shape) and its kind counted. The catalogue page
(docs/catalogue/causes.md) shows each cause's kinds, the most frequent first.

A cause that no variant builds (a stage, a tie, another release, a reviewed case) has no row: the
page says how it is named instead.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from tokparity.chat.conversation import Conversation
from tokparity.chat.message_edits import TOOLS_MARK
from tokparity.chat.reference import ChatReference, prompt_encoder
from tokparity.chat.template import find_template, gguf_template
from tokparity.chat.way import TRANSFORMERS_WAY, ChatWay
from tokparity.corpus import load_corpus
from tokparity.corpus.base import CHATS
from tokparity.corpus.ids import id_cases
from tokparity.diagnose import decoding, wrong_decoders
from tokparity.diagnose.chat_ways import DERIVED, VARIANTS
from tokparity.diagnose.search import Diagnoser
from tokparity.diagnose.variants import TextEdit, char_table
from tokparity.diff.shape import encode_shape, failure_shape, output_shape
from tokparity.diff.shape import kind as kind_of
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY
from tokparity.run.chat import answers_shape
from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType
from tokparity.zoo import resolve_model
from tokparity.zoo.manifest import load_manifest

OUT = Path(__file__).resolve().parents[1] / "docs" / "_hooks" / "shapes.toml"
# One model of each algorithm and kind of pre-tokenizer; each runs every variant that applies to it.
ENCODE_MODELS = ("llama-spm", "gemma-3", "llama-bpe", "gpt-2", "qwen2", "bert-bge", "botchan-unigram", "botchan-bpe",
                 "rwkv-world", "spm-unigram-user-symbols")
CORPORA = ("multilingual", "emoji", "edge", "seams")
EVERY = 4  # every 4th text of each corpus: the kinds, not the counts, are what the page shows
SETTINGS = ((False, False), (True, True))  # (add special tokens, parse special text)
SYSTEM = "You are a helpful assistant."  # a value read off a prompt (chat.default-system-added)
FAILS = "no ids: the engine fails"  # (a variant that fails has no ids to shape: its rows say what failed)
DERIVED_SAMPLE = {"system_default": SYSTEM, "raise_exception": "{message}", "tojson": "slash+sorted",
                  "generation_prompt_as": "Assistant:", "before_content": "\n", "after_end": "\n", "drop_where": "repeat", "append_as": '["system", "Go on."]', "roles_as": "tool=ipython",
                  "tools_in_system": f"\n\nTools:\n{TOOLS_MARK}raw{TOOLS_MARK}",
                  "tools_in_user": f"\n\nTools available:\n{TOOLS_MARK}indented_ascii{TOOLS_MARK}",
                  "content_chars": '{"\\n": "\\r\\n"}', "fill_alternation": "Please continue.",
                  "content_added": '{"role": "user", "which": "last", "before": "", "after": " /no_think"}',
                  "tools_edited": '[{"key": "additionalProperties", "where": "object", "value": false}]',
                  "content_cut": '{"role": "tool", "head": 0, "tail": 8, "note": "[cut] "}',
                  "blank_as": "(empty)",
                  "flatten_history": '{"mode": "all", "role": "user", "head": "", "labels": {"assistant": "AI: ", '
                                     '"system": "", "tool": "Tool: ", "user": "Human: "}, "sep": "\\n", "end": ""}'}


def kind(shape: str) -> str:
    """The shape's kind; a shape sentence of no kind is a sentence shape.KINDS has not learnt."""
    found = kind_of(shape)
    if shape and not found:
        raise ValueError(f"tokparity/diff/shape.py: no kind in KINDS starts {shape[:60]!r}")
    return found


def texts() -> list[str]:
    return [case.text for corpus in CORPORA for k, case in enumerate(load_corpus(corpus)) if k % EVERY == 0]


def per_case_keys(vocab) -> list[str]:
    """The case-dependent variants, each with one value the zoo can show (a length, a special id)."""
    keys = ["ids.truncated:8", "input.sliced:chars/20", 'input.affixed:["\\ufeff", ""]', "pretokenizer.contractions:-'s", "pretokenizer.contractions:+'S", "model.merge-missing:0",
            TextEdit((("\t", " "), ("\u00a0", " ")), " ").key(),  # (a tab and a no-break space read as spaces, runs as one)
            # (a WordPiece list that misses « » and U+00AD, and takes full-width letters for punctuation)
            char_table.key_of((("\u00ab", "as-is"), ("\u00ad", "as-is"), ("\u00bb", "as-is"), ("\uff48", "alone")))]
    special = vocab.special_ids
    if special.get("bos") is not None and special.get("eos") is not None:
        keys.append(f"specials.ids:bos={special['eos']}")
    user = [i for i in range(vocab.size) if vocab.type_of(i) == TokenType.USER_DEFINED][:1]
    keys += [f"user-defined.atomic:-{i}" for i in user]
    return keys


def encoding_kinds(model: str, sample: list[str]) -> dict[str, Counter]:
    ref = RefTokenizer(load_vocab(resolve_model(model).primary[1]))
    out: dict[str, Counter] = {}
    for add, parse in SETTINGS:
        d = Diagnoser(ref, add_special=add, parse_special=parse)
        keys = [*d.variants, *per_case_keys(ref.vocab)]
        for text in sample:
            right = ref.encode(text, add_special=add, parse_special=parse)
            for key in keys:
                variant = d._variant(key)
                if variant is None:
                    continue
                ids = d.encode((key,), text)
                if variant.fails and d.failing((key,), text):
                    out.setdefault(variant.cause, Counter())[FAILS] += 1
                elif ids is not None and ids != right:
                    out.setdefault(variant.cause, Counter())[kind(encode_shape(ref.vocab, text, right, ids))] += 1
    return out


def decoding_kinds(model: str, sample: list[str]) -> dict[str, Counter]:
    ref = RefTokenizer(load_vocab(resolve_model(model).primary[1]))
    out: dict[str, Counter] = {}
    sequences = [(ids, len(ids) // 2, False) for ids in (ref.encode(text, add_special=True, parse_special=True)
                                                         for text in sample)]
    sequences += [(list(case.ids), case.prompt, case.pieces_only) for case in id_cases(ref.vocab)]
    for ids, prompt, pieces_only in sequences:
        for v in decoding.VARIANTS:
            if pieces_only and v.op != "pieces":  # (the vocabulary's blocks: asked of the pieces op only)
                continue
            right = wrong_decoders.right_answers(ref, v.op, ids, prompt, AS_FILES_SAY)[0]
            kinds = set()  # (a case counts once for each kind, however many of the variant's forms give it)
            for answer in decoding.forms_of(v, ref, ids, prompt, AS_FILES_SAY):
                if answer is None or decoding.spelt(answer) == decoding.spelt(right):
                    continue
                if answer == wrong_decoders.FAILED:  # (the engine fails: as the judge shapes a failure)
                    kinds.add(kind(failure_shape(v.op, ref.vocab, ids, "crash", False, right)))
                    continue
                wanted, got = ([r.hex() for r in right], [a.hex() for a in answer]) if v.op == "pieces" else ([right], [answer])
                kinds.add(kind(output_shape(v.op, ref.vocab, ids, wanted, got)))
            for found in kinds:
                out.setdefault(v.name, Counter())[found] += 1
    return out


def chat_ways() -> Iterator[tuple[str, ChatWay]]:
    for v in VARIANTS:
        yield v.name, v.way()
    for name, key in DERIVED.items():
        yield name, TRANSFORMERS_WAY.changed(**{key: DERIVED_SAMPLE[key]})


def chat_kinds(model: str) -> dict[str, Counter]:
    files = resolve_model(model)
    template = find_template(files)
    if template is None:
        return {}
    print(f"{model}: chat", file=sys.stderr)
    ref = RefTokenizer(load_vocab(files.primary[1]))
    reference = ChatReference(template, prompt_encoder(ref.encode, ref.vocab), ref.vocab.special_ids.get("bos"),
                              gguf_template=gguf_template(files, template))
    out: dict[str, Counter] = {}
    try:
        conversations = [Conversation.from_text(case.text, case.id) for case in load_corpus(CHATS)]
        for name, way in chat_ways():
            for conversation in conversations:
                want = reference.answer(conversation)
                try:
                    got = reference.answer(conversation, way)
                except NotImplementedError:  # (llama.cpp's built-ins take string contents only)
                    continue
                if want != got:
                    out.setdefault(name, Counter())[kind(answers_shape(ref.vocab, conversation, want, got))] += 1
    finally:
        reference.close()
    return out


def measure() -> dict[str, Counter]:
    sample = texts()
    found: dict[str, Counter] = {}
    for model in ENCODE_MODELS:
        print(f"{model}: encode, decode, stream, pieces", file=sys.stderr)
        for kinds in (encoding_kinds(model, sample), decoding_kinds(model, sample)):
            for name, counts in kinds.items():
                found.setdefault(name, Counter()).update(counts)
    for model in load_manifest().models:
        for name, counts in chat_kinds(model).items():
            found.setdefault(name, Counter()).update(counts)
    return found


def as_toml(found: dict[str, Counter]) -> str:
    lines = ["# The shapes each cause gives on the zoo's texts: written by `python -m tools.cause_shapes`, read",
             "# by the catalogue page (docs/_hooks/generate.py). Counts are of differences, over the models and",
             "# corpora the tool names; a kind \"\" is a difference with no shape (one side gave nothing).", ""]
    for name in sorted(found):
        cells = ", ".join(f'"{k}" = {n}' for k, n in sorted(found[name].items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(f'"{name}" = {{ {cells} }}')
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.cause_shapes", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with docs/_hooks/shapes.toml, write nothing")
    args = parser.parse_args(argv)
    text = as_toml(measure())
    if args.check:
        same = OUT.exists() and OUT.read_text("utf-8") == text
        print(f"{OUT}: {'as the code gives it' if same else 'not what the code gives: run python -m tools.cause_shapes'}")
        return 0 if same else 1
    OUT.write_text(text, "utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
