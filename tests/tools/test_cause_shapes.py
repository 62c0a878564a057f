"""The catalogue's shape column (docs/_hooks/shapes.toml, written by tools/cause_shapes.py) is what
the code gives: each cause's variant, run on a few of the zoo's texts here, gives only kinds the
file lists for it; every kind is a kind of shape; and no cause that a variant builds is left
without one, but those named below, which no text of the zoo shows."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from tokparity.diagnose.info import declared
from tokparity.diff.shape import KINDS
from tools import cause_shapes

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_hooks"))
import generate  # noqa: E402

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install 'tokparity[llama]'")
PARTS = ("at the start", "in a content", "between contents", "at the end")
# Built, but no text or conversation of the zoo shows them: each needs an input of its own (a
# template written without `-`, a special text with spaces around it, a byte 0 in a stream…).
SHOWN_NOWHERE = {"normalizer.nfd-first", "specials.other-release", "specials.ids",
                 "stream.byte-zero-unmapped", "stream.held-to-end", "stream.lagged", "decode.specials-written", "decode.html-unescaped", "decode.added-skipped",
                 "chat.no-trim-blocks", "chat.systems-hoisted",
                 "chat.no-lstrip-blocks", "chat.trailing-newline-kept", "chat.trim-javascript",
                 # (the chats corpus's reasoning comes before the last user message, where Qwen3's
                 # template leaves it out; no sampled byte-level model has a special token outside its alphabet)
                 "chat.reasoning-dropped", "pieces.specials-through-byte-map",
                 "stream.last-id-per-step",  # (a stream fed one id at a time: only --stream-step above 1 shows it)
                 # (no conversation of the chats corpus has a null content, or two tool calls in one message)
                 "chat.null-content-dropped", "chat.null-content-as-empty", "chat.null-content-as-none",
                 "chat.first-tool-call-only",
                 # (every conversation of the chats corpus with tools asks for a generation prompt)
                 "chat.generation-prompt-added-for-tools",
                 # (each sampled sequence opens with BOS, whose text has no ▁ inside it)
                 "decode.first-token-marks-dropped",
                 # (no content of the chats corpus ends in a no-break space, or holds a brace field
                 # str.format reads; Qwen 3's template trims nothing)
                 "chat.trim-ascii", "chat.content-formatted"}


@pytest.fixture(scope="module")
def measured() -> dict[str, dict[str, int]]:
    with open(cause_shapes.OUT, "rb") as f:
        return tomllib.load(f)


def test_every_kind_in_the_file_is_a_kind_of_shape(measured):
    for name, kinds in measured.items():
        for k in kinds:
            base = next((k.removesuffix(" " + p) for p in PARTS if k.endswith(" " + p)), k)
            assert k in KINDS or base in KINDS or k in (cause_shapes.FAILS, ""), f"{name}: {k!r}"


def test_every_cause_a_variant_builds_has_its_shapes_but_those_no_text_shows(measured):
    column = generate.shapes(declared())
    built = {name for name, e in declared().items() if e["built"] in ("variant", "decoding", "chat")}
    assert {name for name in built if column[name] == "none on the zoo's texts"} == SHOWN_NOWHERE
    assert all(column.values())
    assert column["ids.truncated"].startswith("ids missing at the end")
    assert column["stream.tail-never-sent"].startswith("text missing at the end")
    assert column["chat.generation-prompt-missing"].startswith("prompt cut short at the end")


def test_a_sample_gives_only_the_kinds_the_file_lists(measured):
    sample = cause_shapes.texts()[::25]
    found = {}
    for kinds in (cause_shapes.encoding_kinds("botchan-unigram", sample), cause_shapes.decoding_kinds("gpt-2", sample),
                  cause_shapes.chat_kinds("qwen3")):
        found.update(kinds)
    assert {"space.dummy-prefix", "decode.ids-alone", "chat.system-dropped"} <= set(found)
    for name, kinds in found.items():
        assert set(kinds) <= set(measured[name]), f"{name}: {set(kinds) - set(measured[name])} not in shapes.toml"
