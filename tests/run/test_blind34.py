"""Engines a helper wrote blind from public code, issues and pull requests, after round 33
(tests/engines/blind/blind34_*.py; its author read no diagnosis code and ran no tokparity).
Twelve bugs: six chat, two each of decode, stream and pieces.

On first sight the diagnosis named two of the twelve as its engine does it: a stream that loses a
character its prompt began (sglang's window of five prompt ids, ``stream.begun-character-dropped``)
and a user's content opened with ``user said:`` (autogen's name prefixes, ``chat.content-added``).

Written after the round was seen, and general:

- ``chat.messages-dropped`` (learnt): the messages a rule picks left out. A rule picks each
  message whose role is the one before's, each system message after the first, those before the
  first user message, or those after the last. The verdict takes the fewest rules that give the
  most rows.
- ``chat.alternation-filled`` also puts a message between two messages of one role (aider).
- ``chat.message-appended`` (learnt): a message of the engine's own after the last one. It reads
  SillyTavern's continue nudge, and a second form puts it only where a continue is asked.
- ``chat.continue-as-reply``: a request to continue the last message answered as a new reply.
- ``decode.cut-after-last`` (learnt): the text cut after the last of some characters. Each row
  gives the character its text ends on. The verdict takes them one at a time, while one gains: a
  row given is a gain, an agreement broken a loss. It reads SillyTavern's ``trimToEndSentence``.

Each bug below is named by its cause, its verdict proven, the twin agreeing.

Not named: spaces taken out inside ``*`` and ``_`` pairs, a stream that resends a character whose
grapheme grew, pieces ``nan`` where a vocabulary file's token reads as missing.

Named since as well: pieces with their line ends made LF and NUL made U+0001
(``pieces.newlines-normalized`` with a learnt edit, proven)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

BLIND = Path(__file__).parents[1] / "engines" / "blind"
TEXTS = str(BLIND / "blind34_texts.jsonl")
DECODE = f"cmd:{sys.executable} {BLIND / 'blind34_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind34_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"
CHATS = ["chats", str(BLIND / "blind34_chats.jsonl")]


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("qwen3", "stream", ["edge", "multilingual", TEXTS], DECODE, {"surr-window-slice": ("stream.begun-character-dropped", 50)}),
    # (Llama 3: proven, 184 of 197 rows; most of the rest are where its clean-up of spaces departs, as its twin shows)
    ("qwen3", "decode", ["edge", "ids", TEXTS], DECODE, {"trim-incomplete-sentence": ("decode.cut-after-last", 150)}),
    ("gemma-3", "decode", ["edge", "ids", TEXTS], DECODE, {"trim-incomplete-sentence": ("decode.cut-after-last", 150)}),
    ("qwen3", "chat", CHATS, CHAT, {
        "name-said-prefix": ("chat.content-added", 40),
        "trim-start-end": ("chat.messages-dropped", 8),
        "same-role-keep-first": ("chat.messages-dropped", 5),
        "empty-opposite-inserted": ("chat.alternation-filled", 5)}),
], ids=["stream-qwen3", "decode-qwen3", "decode-gemma3", "chat-qwen3"])
def test_blind_engines_of_round_34_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs, failures_apart=op == "chat")


def test_only_the_first_system_message_kept_and_moved_first_is_named(zoo):
    # (apfel's context manager: the first system message moved to the front, the others left out)
    zoo("qwen3")
    results = run_compare(["qwen3"], CHATS, [f"bug={CHAT} --bug first-system-only"], CompareOptions(ops=("chat",)))
    verdict = next(r for r in results.runs if r.backend == "bug").root_cause
    assert verdict.cause == "chat.systems-hoisted+chat.messages-dropped" and verdict.proven, verdict
    assert verdict.said[1] == "leaves out each system message after the first"


def test_pieces_with_their_line_ends_made_lf_are_named(zoo):
    # (DeepInfra's table written as text lines: CR LF and CR made LF, NUL made U+0001)
    zoo("qwen3")
    results = run_compare(["qwen3"], ["ids", "edge"], [f"bug={DECODE} --bug cr-nul-normalized", f"twin={DECODE}"],
                          CompareOptions(ops=("pieces",)))
    runs = {r.backend: r for r in results.runs}
    verdict = runs["bug"].root_cause
    assert runs["twin"].mismatches == 0 and runs["bug"].mismatches >= 50
    assert verdict.variants == ("pieces.newlines-normalized", 'pieces.edit:[[["\\u0000", "\\u0001"]], ""]'), verdict
    assert verdict.proven
    assert verdict.explains == verdict.mismatches and verdict.keeps == verdict.agreements


def test_a_continue_sent_as_a_new_reply_reads_the_message_put_after_the_last(zoo):
    """On Qwen3 a continue sent as a new reply shows: the last assistant message loses its think
    block. The message put after it is read, and found only where a continue is asked: the
    verdict proves both and keeps every agreement. The twin agrees."""
    zoo("qwen3")
    results = run_compare(["qwen3"], CHATS, [f"bug={CHAT} --bug continue-nudge-system", f"twin={CHAT}"],
                          CompareOptions(ops=("chat",)))
    rows = [m for m in results.mismatches if m.backend == "bug"]
    assert rows and all(m.cause == "chat.continue-as-reply+chat.message-appended" for m in rows), [m.cause for m in rows]
    runs = {r.backend: r for r in results.runs}
    verdict = runs["bug"].root_cause
    assert runs["twin"].mismatches == 0
    assert verdict.variants == ("chat.continue-as-reply", "chat.message-appended") and verdict.proven, verdict
    assert verdict.keeps == verdict.agreements and verdict.explains == verdict.mismatches
    assert any("where it is asked to continue it (system): '[Continue your last message without repeating its "
               "original content.]'" in s for s in verdict.said), verdict.said
