"""Bugs from public reports, judged on engines a helper wrote blind after the causes of
tests/run/test_blind9.py were written (tests/engines/blind/blind10_encode.py, blind10_decode.py
and blind10_chat.py; their author read no diagnosis code). On first sight the diagnosis named
eleven of their sixteen bugs by a reproduced cause (docs/findings.md, "Blind engines, sixth
round"). The engine of a C port (llama3.2.c) was named by an edit learnt from the case, written
before the engines were. The causes below were then written from the reports: two of streams,
and a tojson read off the prompt as a set of ways a JSON writer departs from Python's."""

from __future__ import annotations

import sys
from pathlib import Path

from blind_rounds import assert_named_beside_their_twin

from tokparity.diagnose.variants import said_of
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

BLIND = Path(__file__).parents[1] / "engines" / "blind"
DECODE = f"cmd:{sys.executable} {BLIND / 'blind10_decode.py'} {{tokenizer_json}}"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind10_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"
CHATS = str(BLIND / "blind10_chats.jsonl")  # tools whose schemas hold '/' and non-ASCII text


def test_streams_that_stall_or_drop_parts_of_characters_are_named_and_their_twin_agrees(zoo):
    zoo("qwen3")
    assert_named_beside_their_twin("qwen3", "stream", ["ids", "edge"], DECODE, {
        "prefix-stall": ("stream.stalls-after-change", 80),  # silent after a U+FFFD became a character
        "per-token-ignore": ("decode.ids-alone", 80)})  # decode([id]).decode("utf-8", errors="ignore")


def test_an_edit_learnt_from_the_case_names_what_a_c_port_does_to_the_text(zoo):
    """llama3.2.c writes each piece as a C string: a NUL byte ends it. The learnt edit says so,
    and the bug-free twin agrees."""
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["ids", "edge"], ["hf", f"bug={DECODE} --bug quote-space", f"twin={DECODE}"],
                          CompareOptions(ops=("decode",), oracle="hf"))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["bug"].mismatches >= 1
    verdict = runs["bug"].root_cause
    assert verdict is not None and verdict.cause == "decode.edit" and verdict.proven
    assert said_of(verdict.variants[0]) == "the decoded text written with U+0000 dropped"
    assert {m.cause for m in results.mismatches if m.backend == "bug"} == {"decode.edit"}


def test_a_json_writer_unlike_pythons_is_named_by_the_ways_it_departs(zoo):
    """Foundation's JSONEncoder as swift-jinja's tojson: keys sorted, compact, '/' and non-ASCII
    escaped. No declared cause gives all four at once; the traits read off the prompts do."""
    zoo("qwen3")
    assert_named_beside_their_twin("qwen3", "chat", ["chats", CHATS], CHAT, {
        "foundation-tojson": ("chat.tojson-written-otherwise", 5)})


def test_a_table_of_two_bugs_is_proven_as_a_pair(zoo):
    """guidance's byte table (guidance #434): each ordinary token's text where its bytes belong, and
    no bytes for an added token. Each row shows one of the two, and the verdict named one (95 of
    108, not proven). Two variants together reproduce every row and keep every agreement; the twin
    agrees."""
    from collections import Counter

    zoo("qwen3")
    results = run_compare(["qwen3"], ["ids", "edge"], [f"bug={DECODE} --bug base-vocab-only", f"twin={DECODE}"],
                          CompareOptions(ops=("pieces",)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["twin"].cases > 0
    verdict = runs["bug"].root_cause
    assert verdict is not None and verdict.proven, verdict
    assert verdict.cause == "pieces.text-not-bytes+pieces.specials-left-out"
    assert verdict.explains == verdict.mismatches == runs["bug"].mismatches and verdict.keeps == verdict.agreements
    rows = Counter(m.cause for m in results.mismatches if m.backend == "bug")
    # (the vocabulary's last block holds both bugs: that row is the pair's)
    assert set(rows) == {"pieces.text-not-bytes", "pieces.specials-left-out",
                         "pieces.text-not-bytes+pieces.specials-left-out"}, rows
