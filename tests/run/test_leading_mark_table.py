"""The pieces op judges every id of the vocabulary, not only those a text holds. transformers-cfg
0.2.7's byte table keeps the ``▁`` of a token that does not begin with one; on gemma-3 only
``>▁</`` (id 107068) does, and no case of a corpus holds it. tests/engines/leading_mark_table.py
makes the table as the package does (``Engine``) and right (``Twin``): the first is named
``pieces.marks-only-when-leading`` on the vocabulary's block that holds the id, the twin agrees.
docs/findings.md, "Eighth survey"."""

from __future__ import annotations

from pathlib import Path

from tokparity.corpus.ids import VOCABULARY_BLOCK, id_cases
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = Path(__file__).parents[1] / "engines" / "leading_mark_table.py"


def test_a_table_wrong_on_one_token_no_text_holds_is_named(zoo):
    zoo("gemma-3")
    results = run_compare(["gemma-3"], ["edge", "ids"], [f"bug=py:{ENGINE}:Engine", f"twin=py:{ENGINE}:Twin"],
                          CompareOptions(ops=("pieces",)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["twin"].cases > 500
    rows = [m for m in results.mismatches if m.backend == "bug"]
    assert [(m.cause, 107068 in m.oracle_ids, len(m.oracle_ids)) for m in rows] == \
        [("pieces.marks-only-when-leading", True, VOCABULARY_BLOCK)], [(m.case_id, m.evidence) for m in rows]
    assert rows[0].tags.get("ids") == "vocabulary"
    verdict = runs["bug"].root_cause
    assert verdict is not None and verdict.cause == "pieces.marks-only-when-leading" and verdict.proven, verdict


def test_the_whole_vocabulary_is_asked_of_the_pieces_op_only():
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model

    vocab = load_vocab(resolve_model("llama-spm").primary[1])
    blocks = [c for c in id_cases(vocab) if c.pieces_only]
    assert [i for c in blocks for i in c.ids] == list(range(vocab.size))
    assert all(c.asked("pieces") and not c.asked("decode") and not c.asked("stream") for c in blocks)
    assert not any(c.pieces_only for c in id_cases(vocab)[:-len(blocks)])  # (after the others: their names kept)
