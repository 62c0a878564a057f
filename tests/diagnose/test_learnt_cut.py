"""The text cut at a length, learnt from a case (tokparity.diagnose.learnt_cut), and proven or
not by the run's verdict over every case."""

from __future__ import annotations

from tokparity.diagnose import learnt_cut
from tokparity.diagnose.decoding import diagnose_decoding
from tokparity.diagnose.decoding_verdict import decoding_verdict
from tokparity.diagnose.learnt import is_learnt, said_of
from tokparity.records import Judgement
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY
from tokparity.vocab import load_vocab

TEXT = "Grüße aus Köln 🎉 und viele weitere Grüße an alle, die noch lesen."


def reference(zoo, name: str) -> RefTokenizer:
    return RefTokenizer(load_vocab(zoo(name).primary[1]))


def test_a_cut_is_learnt_in_each_unit_that_gives_it(zoo):
    ref = reference(zoo, "qwen3")
    ids = ref.encode(TEXT, add_special=False)
    right = ref.decode_as(ids, AS_FILES_SAY)
    # 20 characters: "ü", "ß", "ö" are two bytes each, the emoji four bytes and two UTF-16 units;
    # the first 9 ids end there too
    assert learnt_cut.learnt(ref, "decode", ids, 0, AS_FILES_SAY, right[:20]) == [
        'decode.cut-at-length:[20, "characters"]', 'decode.cut-at-length:[21, "UTF-16 units"]',
        'decode.cut-at-length:[26, "bytes"]', 'decode.cut-at-length:[9, "ids"]', 'decode.cut-before-first:"v"']
    key = 'decode.cut-at-length:[20, "characters"]'
    assert is_learnt(key) and said_of(key) == "the text cut to its first 20 characters"
    # a cut in bytes inside "ü" writes U+FFFD (where it leaves the character out, the row reads as
    # a cut before it: the other rows' verdict tells which)
    got = right.encode()[:3].decode("utf-8", "replace")
    assert learnt_cut.learnt(ref, "decode", ids, 0, AS_FILES_SAY, got) == ['decode.cut-at-length:[3, "bytes"]']
    # the first ids' text, where no length in characters gives it otherwise
    three = ref.decode_as(ids[:3], AS_FILES_SAY)
    assert 'decode.cut-at-length:[3, "ids"]' in learnt_cut.learnt(ref, "decode", ids, 0, AS_FILES_SAY, three)
    assert learnt_cut.run_of(key)(ref, ref.encode("Short.", add_special=False), 0, AS_FILES_SAY) == [None]


def test_no_cut_is_learnt_where_the_text_is_not_the_start_of_the_right_one(zoo):
    ref = reference(zoo, "qwen3")
    ids = ref.encode(TEXT, add_special=False)
    for got in ("Grüsse aus", "", "\ufffd", TEXT + "!"):
        assert learnt_cut.learnt(ref, "decode", ids, 0, AS_FILES_SAY, got) == []


def judgement(ref: RefTokenizer, ids: list[int], got: str, n: int) -> Judgement:
    return Judgement("qwen3", "test", str(n), {}, "decoder", "engine", "text", "", "decode", 0, "", ids, [], [], [],
                     op="decode", backend_output=[got])


def verdict_of(ref: RefTokenizer, texts: list[str], engine) -> object:
    """The run's verdict on an engine that answers ``engine(right text, ids)`` for each text."""
    mismatches, agreeing = [], []
    for n, text in enumerate(texts):
        ids = ref.encode(text, add_special=False)
        right, got = ref.decode_as(ids, AS_FILES_SAY), engine(ref.decode_as(ids, AS_FILES_SAY), ids)
        if got == right:
            agreeing.append((ids, 0, f"test/{n}"))
        else:
            j = judgement(ref, ids, got, n)
            mismatches.append((j, diagnose_decoding(ref, j)))
    return decoding_verdict(ref, "decode", AS_FILES_SAY, mismatches, agreeing)


TEXTS = [TEXT, "A short one.", "Another text, long enough to be cut by a limit of thirty.", "Ok", TEXT * 2]


def test_a_cut_at_one_length_is_proven_and_a_last_id_lost_is_not(zoo):
    ref = reference(zoo, "qwen3")
    cut = verdict_of(ref, TEXTS, lambda right, ids: right[:30])
    assert cut.cause == "decode.cut-at-length" and cut.proven, cut
    assert cut.variants == ('decode.cut-at-length:[30, "characters"]',) and cut.explains == 3
    in_bytes = verdict_of(ref, TEXTS, lambda right, ids: right.encode()[:30].decode("utf-8", "replace"))
    assert in_bytes.variants == ('decode.cut-at-length:[30, "bytes"]',) and in_bytes.proven, in_bytes
    # each text less its last id: a start of the right text on every row, at no one length
    lost = verdict_of(ref, TEXTS, lambda right, ids: ref.decode_as(ids[:-1], AS_FILES_SAY))
    assert lost is None or not (lost.cause == "decode.cut-at-length" and lost.proven), lost


def test_the_characters_a_text_is_cut_after_are_those_that_give_and_keep_the_most():
    """Rows of a trim to the last whole sentence. One row is cut where a lone ``*`` follows a
    space. Another ends on ``d`` by accident (another bug cut it). The cut after the last ``d``
    would break an agreement that holds no mark, so ``d`` is not taken."""
    rows = [("Sure. Then we", "Sure."), ("Why? Because", "Why?"), ("Stop! Now", "Stop!"),
            ("He says *smiles", "He says"), ("Done. Then", "Done."), ("A friend, nice", "A friend")]
    agreements = ["It works.", "Yes, this is fine!", "The cats sat.", "Done, and so on"]
    key = learnt_cut.learnt_after(rows, agreements)
    assert key == learnt_cut.marks_key("!.?*") and learnt_cut.marks_of(key) == "!*.?"
    assert learnt_cut.said_of(key) == "the text cut after the last of '!', '*', '.', '?'"
    # (the lone mark's row is its third form: the mark after a space cut with that space)
    assert [learnt_cut.after_forms(right, "!*.?").index(got) for right, got in rows[:5]] == [0, 0, 0, 2, 0]
    assert all(learnt_cut.after_forms(text, "!*.?")[0] == text for text in agreements)
    assert learnt_cut.learnt_after([("abc", "abd")], []) is None  # (no row that is the right text cut)


def test_a_character_some_rows_give_by_accident_is_not_taken_where_it_breaks_agreements():
    """Three rows end on ``d`` by accident, and the cut after ``d`` gives them. It would break two
    agreements of a hundred: more than ``proven`` allows, so ``d`` is not taken. The cut after
    ``.`` alone gives 27 of the 30 rows and keeps every agreement. (From a second read.)"""
    rows = [(f"Sentence {i}. Then we", f"Sentence {i}.") for i in range(27)]
    rows += [("A friend, nice", "A friend"), ("We stand here", "We stand"), ("I said so", "I said")]
    agreements = [f"It works {i}." for i in range(98)] + ["and so on", "good one"]
    assert learnt_cut.learnt_after(rows, agreements) == learnt_cut.marks_key(".")


def test_the_characters_a_text_is_cut_before_are_those_that_give_and_keep_the_most():
    """A stop sequence split as a regular expression: "<|im_end|>" cuts at the first "<" or ">".
    A row gives the character after its cut. "x" gives one row by accident and breaks agreements."""
    rows = [("a <b> c", "a "), ("x > y", "x "), ("q < r", "q "), ("wxyz", "w")]
    agreements = ["plain text", "mixed x text", "and x again"]
    key = learnt_cut.learnt_before(rows, agreements)
    assert key == learnt_cut.marks_key("<>", learnt_cut.BEFORE), key
    assert learnt_cut.before_forms("one < two > three", "<>") == ["one ", "one"]
    assert learnt_cut.before_forms("no marks ", "<>") == ["no marks ", "no marks"]
