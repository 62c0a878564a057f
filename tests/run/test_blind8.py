"""Bugs from public reports, judged on engines a helper wrote blind after the causes of
tests/run/test_blind7.py were written (tests/engines/blind/blind8_encode.py, blind8_decode.py and
blind8_chat.py; their author read no diagnosis code). On first sight the diagnosis named eight of
their fourteen bugs by a reproduced cause. The causes below were then written or widened from the
reports (docs/findings.md, "Blind engines, fourth round"). Each run asks one or two bugs beside the
bug-free twin: each bug is named by its cause, its verdict proves it, and the twin agrees."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

BLIND = Path(__file__).parents[1] / "engines" / "blind"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind8_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind8_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"
TEXTS = str(BLIND / "blind8_texts.jsonl")  # texts that end inside a tag: '<', '</thi'


# model, op, corpora, engine, {bug: (its cause, the fewest mismatches)}
@pytest.mark.parametrize("model,op,corpora,engine,bugs", [
    ("qwen3", "pieces", ["ids", "edge"], DECODE, {
        "user-defined-empty": ("pieces.specials-left-out", 10)}),  # added tokens that are not special: no bytes
    ("qwen3", "stream", ["ids", "edge", TEXTS], DECODE, {
        "tag-held": ("stream.tag-start-held", 4),  # a partial <think> held back, never sent
        "trim-each-delta": ("stream.deltas-lstripped", 200)}),  # every chunk trimmed
], ids=["pieces", "stream"])
def test_blind_engines_of_the_fourth_round_are_named_and_their_twin_agrees(zoo, model, op, corpora, engine, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, op, corpora, engine, bugs)


def test_a_template_without_its_special_tokens_is_named_by_the_same_refusal(zoo):
    """A runtime that renders the template without bos_token: Llama 3's template adds it to a text,
    and jinja2 refuses the undefined name. Each refusal is the way's own refusal, "'bos_token' is
    undefined", so each row is named. The verdict is not proven: the engine refuses every
    conversation, and no agreement is left to check it on."""
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["chats"], [f"x={CHAT} --bug no-special-vars", f"twin={CHAT}"],
                          CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].unexplained == 0 and runs["x"].mismatches == runs["x"].cases > 30
    assert {m.cause for m in results.mismatches if m.backend == "x"} == {"chat.special-tokens-not-given"}
    verdict = runs["x"].root_cause
    assert verdict is not None and verdict.cause == "chat.special-tokens-not-given" and not verdict.proven

