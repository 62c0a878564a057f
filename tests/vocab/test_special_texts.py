"""Where special-token texts occur in a text (tokparity.vocab.special_texts): the same as an
alternation of them all, on every vocabulary size, and every text of a large vocabulary found by
the decode judge (it once read the first 4,096 of Gemma 3's 6,252)."""

from __future__ import annotations

import random
import re

from tokparity.corpus import Case
from tokparity.run.ops import DecodingJudge
from tokparity.vocab import load_vocab
from tokparity.vocab.special_texts import SpecialTextFinder


def test_found_leftmost_and_longest_first_as_one_alternation_finds_them():
    """``find`` is what a tokenizer that parses special-token text finds (and what diff/chat once
    found with one regex of them all): on 2,000 random texts over their characters, the same."""
    rng = random.Random(7)
    specials = ["<s>", "</s>", "<s", "<|a|>", "<|a|><|b|>", "<|b|>", "ab", "b", "<<", "x"]
    finder = SpecialTextFinder(specials + [""])
    alternation = re.compile("|".join(re.escape(t) for t in sorted(specials, key=len, reverse=True)))
    for _ in range(2000):
        text = "".join(rng.choice("<>/|absx ") for _ in range(rng.randrange(30)))
        assert finder.find(text) == [(m.start(), m.group()) for m in alternation.finditer(text)], text
        assert finder.present(text) == sorted({t for t in specials if t in text}, key=lambda t: (-len(t), t)), text
        assert finder.holds(text) == any(t in text for t in specials), text


def test_no_special_texts_find_nothing():
    finder = SpecialTextFinder(["", ""])
    assert not finder and finder.find("<s>") == [] and finder.present("<s>") == [] and not finder.holds("<s>")


def test_the_last_of_gemma_3s_special_texts_is_a_special_token_to_the_decode_judge(zoo):
    """A decoder that writes ``<image_soft_token>`` (Gemma 3's 6,252nd special text) where the other
    leaves it out differs only in a special token; with the first 4,096 read, no special was found
    and the evidence said only that the same ids decode differently."""
    vocab = load_vocab(zoo("gemma-3").files["gguf"])
    assert list(vocab.special_texts().values()).index("<image_soft_token>") >= 4096
    judge = DecodingJudge("gemma-3", vocab, {}, "ref", {})
    case = Case("t0", "a<image_soft_token>b", "texts")
    cls, evidence, *_ = judge._judge("decode", [], 0, case, "ab", "a<image_soft_token>b", "eng")
    assert cls == "decode-roundtrip"
    assert evidence.startswith("the decoded texts differ only in special tokens ('<image_soft_token>'), written "
                               "as their text on the backend's side"), evidence
