"""Seeded generators: deterministic for a seed, complete where they promise to be, well-formed cases."""

from __future__ import annotations

import unicodedata
from itertools import islice

import pytest

from tokparity.errors import TokparityError, UnknownGenerator
from tokparity.fuzz.generators import (
    GENERATORS,
    assigned_codepoints,
    generate,
    generate_all,
    interleave,
    piece_texts,
    simplicity,
    special_texts,
)
from tokparity.vocab import load_vocab

FINITE = ("unicode-seams", "vocab-pieces", "special-whitespace", "ascii-pairs", "codepoints")


@pytest.fixture(scope="module")
def spm_vocab(zoo):
    return load_vocab(zoo("llama-spm").primary[1])


@pytest.fixture(scope="module")
def unigram_vocab(zoo):
    return load_vocab(zoo("botchan-unigram").primary[1])


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in GENERATORS])
def test_same_seed_same_cases(name, spm_vocab):
    first = [(c.id, c.text, c.tags) for c in generate(name, spm_vocab, seed=7, limit=300)]
    again = [(c.id, c.text, c.tags) for c in generate(name, spm_vocab, seed=7, limit=300)]
    assert first == again
    other = [c.text for c in generate(name, spm_vocab, seed=8, limit=300)]
    if name == "unicode-seams":  # ordered, not shuffled: the same texts for every seed (tests/fuzz/test_seams.py)
        assert other == [text for _, text, _ in first]
    else:
        assert other != [text for _, text, _ in first]


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in GENERATORS])
def test_cases_are_well_formed(name, spm_vocab):
    cases = list(generate(name, spm_vocab, seed=1, limit=500))
    assert len(cases) == 500 or (name in FINITE and cases)  # llama-spm has 3 special tokens: 441 cases
    assert len({c.id for c in cases}) == len(cases)
    for c in cases:
        assert c.corpus == f"gen:{name}"
        assert c.tags["generator"] == name
        assert c.text, c
        c.text.encode("utf-8")  # no lone surrogates: every engine must be able to take it


def test_vocab_pieces_are_every_piece_once(unigram_vocab):
    texts = [c.text for c in generate("vocab-pieces", unigram_vocab, seed=3)]
    expected = [t for _, t in piece_texts(unigram_vocab)]
    assert sorted(texts) == sorted(expected)
    assert texts != expected  # shuffled by the seed
    assert " the" in texts  # '▁the' decoded


def test_piece_texts_decode_spellings(spm_vocab, zoo):
    spm = dict(piece_texts(spm_vocab))
    assert spm[29871] == " "  # '▁'
    assert spm[13] == "\n"  # '<0x0A>'
    assert 1 not in spm and 2 not in spm  # <s>, </s>: control tokens stand for no text
    bpe = dict(piece_texts(load_vocab(zoo("llama-bpe").primary[1])))
    assert bpe[22691] == " Hello"  # 'ĠHello'


def test_special_whitespace_puts_whitespace_on_both_sides(spm_vocab):
    assert sorted(special_texts(spm_vocab)) == ["</s>", "<s>", "<unk>"]
    texts = {c.text for c in generate("special-whitespace", spm_vocab, seed=0)}
    assert len(texts) == 3 * 7 * 7 * 3
    assert {"<s>", " <s>", "<s> ", "a\n<s>\tb", "Hello  </s>\n\n world"} <= texts


def test_ascii_pairs_are_complete():
    texts = [c.text for c in generate("ascii-pairs", seed=0)]
    assert len(texts) == len(set(texts))
    chars = [chr(c) for c in range(0x20, 0x7F)] + ["\t", "\n"]
    assert {a + b for a in chars for b in chars} <= set(texts)
    assert {"ab", " ab", "ab ", " ab ", "\t\n", " ''"} <= set(texts)


def test_codepoints_cover_every_assigned_code_point_bytes_first():
    cases = list(generate("codepoints", seed=0))
    cps = [ord(c.text) for c in cases]
    assert sorted(cps[:256]) == list(range(256))
    assert len(cps) == len(set(cps)) == sum(len(v) for v in assigned_codepoints().values())
    assert all(unicodedata.category(chr(cp)) not in ("Cs", "Co", "Cn") for cp in cps)
    # after the first 256, the categories take turns
    assert len({c.tags["category"] for c in cases[256:256 + 40]}) >= 25


def test_multilingual_words_span_scripts():
    tags = {c.tags["script"] for c in generate("multilingual-words", seed=0, limit=500)}
    assert {"Cyrl", "Arab", "Hani", "mixed"} <= tags


def test_apostrophes_and_numbers_and_long_texts(spm_vocab):
    apos = [c.text for c in generate("apostrophes", seed=0, limit=300)]
    assert any("'S" in t or "'LL" in t for t in apos) and any("\u2019" in t for t in apos)
    nums = [c.text for c in generate("numbers", seed=0, limit=300)]
    assert sum(t.isdigit() for t in nums) > 50 and any("," in t for t in nums)
    longs = [c.text for c in generate("long-texts", spm_vocab, seed=0, limit=20)]
    assert min(len(t) for t in longs) >= 200


def test_generate_all_interleaves_every_generator(spm_vocab):
    cases = list(islice(generate_all(spm_vocab, seed=0), 60))
    corpora = {c.corpus for c in cases}
    assert corpora == {f"gen:{n}" for n in GENERATORS}
    assert [c.text for c in islice(generate_all(spm_vocab, seed=0), 60)] == [c.text for c in cases]


def test_generate_all_without_vocab_leaves_vocab_generators_out():
    corpora = {c.corpus for c in islice(generate_all(None, seed=0), 100)}
    assert "gen:vocab-pieces" not in corpora and "gen:ascii-pairs" in corpora


def test_interleave_takes_turns_and_drops_finished():
    out = list(interleave([iter("ab"), iter("1234"), iter("XYZ")], [1, 1, 2]))
    assert out == ["a", "1", "X", "b", "2", "3", "Y", "4", "Z"]


def test_unknown_generator_names_the_known_ones():
    with pytest.raises(UnknownGenerator, match="known: unicode-seams, vocab-pieces"):
        generate("vocab", None)
    with pytest.raises(TokparityError, match="needs a vocabulary"):
        next(generate("vocab-concat", None))


def test_simplicity_orders_plain_text_first():
    assert sorted(["é", "\x00", "a", "A", " ", "ab"], key=simplicity) == ["a", "A", " ", "é", "\x00", "ab"]
