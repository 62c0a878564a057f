"""input.edit (tokparity/diagnose/variants/text_edit.py): an edit of the text learnt from one case,
on Llama 3's real vocabulary. What it learns, what it refuses to learn, and how a verdict joins
the edits of several cases."""

from __future__ import annotations

import pytest

from tokparity.diagnose.variants import TextEdit, edit_of, parse_edit
from tokparity.diagnose.variants.text_edit import between
from tokparity.diagnose.verdict import _combined
from tokparity.reference import RefTokenizer
from tokparity.vocab import load_vocab


@pytest.fixture(scope="module")
def ref(zoo):
    return RefTokenizer(load_vocab(str(zoo("llama-bpe").primary[1])))


def learnt(ref, text: str, engine_reads: str) -> TextEdit | None:
    return edit_of(ref.vocab, ref.encode(text, False, False), ref.encode(engine_reads, False, False))


def test_a_tab_read_as_a_space_and_runs_of_spaces_as_one(ref):
    edit = learnt(ref, "a\tb  c d", "a b c d")
    assert edit == TextEdit((("\t", " "),), " ")
    assert edit("x\t\t y") == "x y"
    assert edit.said() == "the text read with U+0009 as ' ', runs of ' ' as one"
    assert parse_edit(edit.key()) == edit


@pytest.mark.parametrize("text,engine_reads", [
    ("Hello world!!", "Hello world!"),  # a cut at the end, not a run squeezed
    ("hi, you", "hi!you"),  # two characters as one that neither is
    ("naïve text", "naive text"),  # a letter: a normalizer's cause
    ("A！B C", "A!B C"),  # NFKC's own mapping: a normalizer's cause
    ("same text", "same text"),  # nothing edited
    ("a b", "a xb"),  # text inserted
    ("a..b..c", "a.b..c"),  # difflib reads a run squeezed, which is not what happened to the second run
    ("a\ufffd b", "a\U0001F900 b"),  # bytes that are not UTF-8, completed by a decoder's leftover state
])
def test_what_is_not_learnt(ref, text, engine_reads):
    assert learnt(ref, text, engine_reads) is None


def test_a_verdict_joins_edits_and_keeps_the_first_of_two_that_disagree():
    tab, runs, other = TextEdit((("\t", " "),)), TextEdit((), " "), TextEdit((("\t", ""),))
    assert _combined([tab.key(), runs.key(), "bos"]) == (TextEdit((("\t", " "),), " ").key(), "bos")
    assert _combined([tab.key(), other.key()]) == (tab.key(),)


@pytest.mark.parametrize("text,engine_reads,said", [
    ("a\t\tb\tc", "a        b    c", "the text read with U+0009 as '    '"),  # one character as several
    # (difflib pairs the spaces wrongly here; each character read one way, the fewest changed, does not)
    ("\t \t mixed \t", "          mixed     ", "the text read with U+0009 as '    '"),
    ("a\tb", "a    b", "the text read with U+0009 as '    '"),
])
def test_a_character_read_as_several(text, engine_reads, said):
    edit = between(text, engine_reads)
    assert edit is not None and edit.said() == said and edit(text) == engine_reads
    assert parse_edit(edit.key("decode.edit:")) == edit


def test_a_long_text_is_read_whole_not_block_by_block(monkeypatch):
    """difflib grows faster than the square of a text of punctuation (81 s on 4,785 characters):
    a text longer than BLOCKS_UP_TO is read character by character only."""
    from tokparity.diagnose.variants import text_edit

    def blocks(a: str, b: str):
        raise AssertionError("read block by block")

    monkeypatch.setattr(text_edit, "_by_blocks", blocks)
    text = " , . ; ! ".join(chr(0x4E00 + i) for i in range(400))
    assert len(text) > text_edit.BLOCKS_UP_TO
    assert between(text, text.replace(" ", "").replace(",", ".") + ";") is None
    assert between(text, text.replace(",", "")) == TextEdit(((",", ""),))


def test_a_text_of_many_characters_each_a_choice_is_read_as_no_edit_not_a_crash():
    """Each new emoji is a choice of the character-by-character reading: past SOLVING choices it
    gives up, and never reaches Python's recursion limit."""
    text = "".join(chr(0x1F300 + i) for i in range(1500)) + ", x"
    assert between(text, text.replace(",", "")) is None
    assert between("日本" * 800 + ", x", "日本" * 800 + " x") == TextEdit(((",", ""),))


def test_a_run_of_backslashes_read_as_one_is_no_regex_template():
    # (re.sub read "\\" as a template and raised: the diagnosis of a text with "\\\\" failed)
    assert TextEdit(runs="\\")("C:\\\\new\\\\\\table") == "C:\\new\\table"
    assert between("a\\\\b", "a\\b") == TextEdit(runs="\\")


def test_an_edit_narrowed_to_the_classes_of_character_after_it():
    everywhere = TextEdit((("$", "\\$"),))
    # (an escaper of "$" before a digit: a "$" before a letter stays)
    assert everywhere.narrowed([("$5 or $x", "\\$5 or $x"), ("$10.", "\\$10.")]) == TextEdit((("$", "\\$"),), "", ("N",))
    # (an escaper of every "$": the classes it was seen before; the verdict weighs it after the edit
    # everywhere, which keeps as many agreements)
    assert everywhere.narrowed([("$5 or $x", "\\$5 or \\$x")]).before == ("L", "N")
    # (a "$" before a digit written and one kept: no class gives both)
    assert everywhere.narrowed([("$5 or $6", "\\$5 or $6")]) is None
    # (each pair's classes alone give it, their union not: the first pair keeps a "$" before a letter)
    assert everywhere.narrowed([("$1$a", "\\$1$a"), ("$a", "\\$a")]) is None
    narrowed = TextEdit((("$", "\\$"),), "", ("N",))
    assert parse_edit(narrowed.key("decode.edit:")) == narrowed and narrowed("$$1 $") == "$\\$1 $"
    assert narrowed.joined(everywhere) == everywhere
    assert narrowed.joined(TextEdit((("$", "\\$"),), "", ("end",))).before == ("N", "end")
    # (one set of classes holds for a whole table: another character written everywhere is no join)
    assert narrowed.joined(TextEdit((("\t", " "),))) is None
    assert TextEdit((("#", "\\#"), ("$", "\\$")), "", ("N",)).said("") == " '#' as '\\\\#', '$' as '\\\\$', each only before a digit"
