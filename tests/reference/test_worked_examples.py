"""One hand-worked example per algorithm and stage, on vocabularies small enough to check by eye."""

from __future__ import annotations

from tokparity.reference.bpe import merge_word, merge_word_heap
from tokparity.reference.normalize import SpNormalizer
from tokparity.reference.pretokenize import Pretokenizer, bytes_to_gpt2
from tokparity.reference.specials import Special, partition
from tokparity.reference.spm import spm_merge
from tokparity.reference.ugm import LLAMA_CPP, SENTENCEPIECE, UgmModel
from tokparity.reference.wpm import preprocess, wordpiece
from tokparity.vocab.model import TokenType

N, U = TokenType.NORMAL, TokenType.USER_DEFINED


def test_spm_merges_by_score_of_the_merged_piece():
    # vocabulary ▁ a b ▁a ab ▁ab: "ab" (-1.5) beats "▁a" (-2), then "▁ab" forms.
    scores = {"▁": -1.0, "a": -1.0, "b": -1.0, "▁a": -2.0, "ab": -1.5, "▁ab": -3.0}
    result = spm_merge(list("▁ab"), scores, trace=True)
    assert result.symbols == ["▁ab"]
    assert [(s.left, s.right) for s in result.steps] == [("a", "b"), ("▁", "ab")]


def test_spm_ties_go_left():
    scores = {"a": 0.0, "aa": -1.0}
    assert spm_merge(list("aaa"), scores).symbols == ["aa", "a"]


def test_bpe_merges_by_rank():
    ranks = {("a", "b"): 0, ("b", "c"): 1, ("ab", "c"): 2}
    result = merge_word(list("abc"), ranks, trace=True)
    assert result.symbols == ["abc"]
    assert [(s.left, s.right, s.rank) for s in result.steps] == [("a", "b", 0), ("ab", "c", 2)]
    assert merge_word_heap(list("abc"), ranks) == ["abc"]


def test_bpe_leftmost_on_equal_rank():
    ranks = {("a", "a"): 0}
    assert merge_word(list("aaa"), ranks).symbols == ["aa", "a"] == merge_word_heap(list("aaa"), ranks)


def test_gpt2_byte_map_and_llama3_split():
    assert bytes_to_gpt2(" hé\n") == "ĠhÃ©Ċ"
    assert Pretokenizer.for_gguf("llama-bpe").split("Hello world's 1234  \n\n x") == \
        ["Hello", " world", "'s", " ", "123", "4", "  \n\n", " x"]
    assert Pretokenizer.for_gguf("gpt-2").split("I'm  here") == ["I", "'m", " ", " here"]


def test_ugm_viterbi():
    # ▁ab -3, ▁a -2, b -2, ▁ -1, a -1:  ▁ab (-3) beats ▁a+b (-4) and ▁+a+b (-4).
    tokens = ["<unk>", "▁ab", "▁a", "b", "▁", "a"]
    types = [TokenType.UNKNOWN, N, N, N, N, N]
    scores = [0.0, -3.0, -2.0, -2.0, -1.0, -1.0]
    for options in (LLAMA_CPP, SENTENCEPIECE):
        model = UgmModel.build(tokens, types, scores, 0, options)
        assert model.encode("▁ab") == [(1, "▁ab")]
        # "x" is unknown: min score -3, minus the penalty 10 -> -13 per unknown code point
        assert model.encode("▁x") == [(4, "▁"), (0, "x")]


def test_ugm_user_defined_scores():
    tokens = ["<unk>", "a", "b", "ab", "[ab]"]
    types = [TokenType.UNKNOWN, N, N, N, U]
    scores = [0.0, -1.0, -1.0, -5.0, -100.0]
    # user-defined pieces score 0 (llama.cpp) or 0.1 * (bytes - 1) (SentencePiece), not -100
    assert UgmModel.build(tokens, types, scores, 0, LLAMA_CPP).encode("[ab]")[0] == (4, "[ab]")
    assert UgmModel.build(tokens, types, scores, 0, SENTENCEPIECE).encode("[ab]")[0] == (4, "[ab]")


def test_wordpiece_greedy_longest_match():
    vocab = {"▁un": 1, "aff": 2, "able": 3, "▁a": 4, "a": 5}
    assert wordpiece("unaffable", vocab, 5, 100) == [1, 2, 3]
    assert wordpiece("unaffablez", vocab, 5, 100) == [100]  # one position without a match: [UNK]
    assert preprocess("Hello, Wörld!") == ["hello", ",", "world", "!"]
    assert preprocess("日本") == ["日", "本"]


def test_partition_with_lstrip_and_rstrip():
    specials = [Special(7, "<mask>", lstrip=True), Special(1, "<s>", parse_only=True, rstrip=True)]
    assert partition("a <mask> b", specials, parse_special=False) == ["a", 7, " b"]
    assert partition("a <s>  b", specials, parse_special=False) == ["a <s>  b"]
    assert partition("a <s>  b", specials, parse_special=True) == ["a ", 1, "b"]


def test_normalizer_flavours_differ_on_the_first_word():
    common = dict(add_space_prefix=False, remove_extra_whitespaces=True, escape_whitespaces=True,
                  treat_whitespace_as_suffix=False)
    sp = SpNormalizer(None, [], flavour="sentencepiece", **common)
    lc = SpNormalizer(None, [], flavour="llama.cpp", **common)
    assert sp.normalize("  Hello   world  ") == "Hello▁world"
    assert lc.normalize("  Hello   world  ") == "▁Hello▁world"  # llama.cpp: a space before every word
