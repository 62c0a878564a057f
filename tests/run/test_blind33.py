"""Engines a helper wrote blind from public code, issues and pull requests, after round 32
(tests/engines/blind/blind33_*.py; its author read no diagnosis code and ran no tokparity).
Twelve bugs: six chat, two each of decode, stream and pieces.

On first sight the diagnosis named none of the twelve as its engine does it. One came close: a
``$`` escaped before a digit read as every ``$`` escaped (``decode.edit``, proven, 10 agreements
broken). A stream that stops after 16 ids read as cut at 16 characters, not proven. A learnt
cut at a length was written before the round, and read no ids of a stream.

Written after the round was seen, and general: ``decode.cut-at-length`` reads a stream's
generated ids too; ``pieces.bytes-as-text`` (learnt: a piece that is not UTF-8 alone written in a
notation read off a one-byte piece, ``byte: \\xNN`` or ``<0xNN>``); ``decode.unprintable-bytes-dropped``
(llama2.c's ``safe_printf``, copied by its many ports); ``decode.reasoning-until-end-tag`` (a
reasoning parser that takes every reply to start inside its reasoning). For chat: a role renamed
is read where the template writes no role it does not know, and a text added is read again on the
prompt with that role renamed; ``chat.assistant-messages-dropped`` (all, or those with or without
tool calls); ``chat.blank-content-replaced`` (learnt: a blank content filled with a text of its
own); ``chat.history-flattened`` (learnt: messages written as the text of one, each with its
role's label). Each bug below is named by its cause, its verdict proven, the twin agreeing.

Pieces emptied where the token's text holds ``s>`` are named since, by a rule learnt on the token's
text (``pieces.replaced-where``). A ``$`` escaped only before a digit is named since: a learnt edit
is weighed beside the same edit written only before the classes of character its rows show it
before, and the agreements choose.

The conversation sent as ``Human:`` and ``AI:`` lines, and each past exchange sent as a system
message, are named since too. The render is read as a pattern: each label, the separator and the
end the same text wherever they stand, an empty content included. A run's verdict drops the causes
few rows name where the rest is proven and the union is not.

Not named: past replies written as HTML (``<br>``, code blocks)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

from tokparity.diagnose.variants import parse_edit
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

BLIND = Path(__file__).parents[1] / "engines" / "blind"
TEXTS = str(BLIND / "blind33_texts.jsonl")
DECODE = f"cmd:{sys.executable} {BLIND / 'blind33_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind33_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"
CHATS = ["chats", str(BLIND / "blind33_chats.jsonl")]


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("llama-bpe", "decode", ["edge", TEXTS], DECODE, {"safe-printf-bytes": ("decode.unprintable-bytes-dropped", 100)}),
    ("qwen3", "stream", ["edge", TEXTS], DECODE, {
        "reasoning-until-think-end": ("decode.reasoning-until-end-tag", 500),
        "stop-after-16-tokens": ("stream.cut-at-length", 30)}),
    ("gemma-3", "pieces", ["ids", "edge"], DECODE, {
        "byte-hex-marker": ("pieces.bytes-as-text", 30), "s-gt-empty": ("pieces.replaced-where", 10)}),
    ("qwen3", "chat", CHATS, CHAT, {
        "empty-text-placeholder": ("chat.blank-content-replaced", 7),
        "assistant-text-dropped": ("chat.assistant-messages-dropped", 16),
        "system-as-user-tagged": ("chat.role-renamed+chat.content-added", 11)}),
    ("llama-bpe", "chat", CHATS, CHAT, {"assistant-text-dropped": ("chat.assistant-messages-dropped", 16)}),
], ids=["decode-llama3", "stream-qwen3", "pieces-gemma3", "chat-qwen3", "chat-llama3"])
def test_blind_engines_of_round_33_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs, failures_apart=op == "chat")


def test_a_dollar_escaped_before_a_digit_only_is_read_so_and_keeps_every_agreement(zoo):
    zoo("qwen3")
    results = run_compare(["qwen3"], ["edge", TEXTS], [f"bug={DECODE} --bug dollar-digit-escaped", f"twin={DECODE}"],
                          CompareOptions(ops=("decode",)))
    runs = {r.backend: r for r in results.runs}
    verdict = runs["bug"].root_cause
    assert runs["twin"].mismatches == 0 and runs["bug"].mismatches >= 5
    # (the same edit everywhere would write the "$" of a price in words, "$x", and break agreements)
    assert verdict.cause == "decode.edit" and verdict.proven and verdict.breaks == ()
    assert verdict.keeps == verdict.agreements and verdict.explains == verdict.mismatches
    edit = parse_edit(verdict.variants[0])
    assert edit.before == ("N",) and edit("$5 and $x") == "\\$5 and $x"
    assert edit.said("").strip() == "'$' as '\\\\$' only before a digit"


@pytest.mark.parametrize("bug,said", [
    # (langchain's ChatOllama before it spoke chat: one prompt of "Human: " and "AI: " lines)
    ("history-one-prompt", "writes every message as the text of one user message: each its label (assistant 'AI:␣', "
                           "system '', tool '↵↵Tool:␣', user 'Human:␣') and its content, joined by '↵'"),
    # (a browser extension that sent each past exchange as a system message of its own)
    ("history-as-system-context", "writes each past user message and the reply after it as the text of one system "
                                  "message: each its label (assistant 'AI␣RESPONSE:␣', user 'CONTEXT:␣USER␣PROMPT:␣') "
                                  "and its content, joined by '␣'"),
])
def test_a_conversation_written_as_text_is_read_with_its_labels_and_proven(zoo, bug, said):
    zoo("qwen3")
    results = run_compare(["qwen3"], CHATS, [f"bug={CHAT} --bug {bug}", f"twin={CHAT}"], CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    verdict = runs["bug"].root_cause
    assert runs["twin"].mismatches == 0 and runs["bug"].mismatches >= 18
    assert verdict.cause == "chat.history-flattened" and verdict.proven and verdict.breaks == (), verdict
    assert verdict.said == (said,)
    causes = Counter(m.cause for m in results.mismatches if m.backend == "bug")
    # (the rest: a list of parts written as its repr, which the template refuses; a user message
    # with no reply after it, whose empty reply is written with its label)
    assert causes["chat.history-flattened"] >= 0.9 * runs["bug"].mismatches, causes
