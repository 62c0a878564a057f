"""Readable pieces, the prompt-like test and the token comparison, on real vocabularies' pieces."""

from __future__ import annotations

import pytest

from tokparity.report.outputs import mismatch_comparison
from tokparity.report.pieces import BYTE_LEVEL, PLAIN, SPM, piece_style, readable
from tokparity.report.plain import comparison_lines
from tokparity.report.writeup import comparison, most_telling, prompt_like
from tokparity.run.results import Mismatch
from tokparity.vocab import load_vocab


@pytest.fixture(scope="module")
def vocabs(zoo):
    return {name: load_vocab(zoo(name).primary[1]) for name in ("llama-spm", "llama-bpe", "bert-bge")}


@pytest.mark.parametrize(("model", "style"), [
    pytest.param("llama-spm", SPM, id="llama-spm"),
    pytest.param("llama-bpe", BYTE_LEVEL, id="llama-bpe"),
    pytest.param("bert-bge", SPM, id="bert-bge"),  # llama.cpp's WordPiece GGUF marks word starts with ▁
])
def test_piece_style_of_a_whole_vocabulary(vocabs, model, style):
    assert piece_style(vocabs[model].tokens) == style


@pytest.mark.parametrize(("model", "token_id", "shown"), [
    pytest.param("llama-bpe", 101798, "␣Việt", id="bpe-word"),  # 'ĠViá»ĩt'
    pytest.param("llama-bpe", 5080, "<0xE1><0xBB>", id="bpe-part-of-a-character"),  # 'á»': two of ệ's three bytes
    pytest.param("llama-bpe", 198, "↵", id="bpe-newline"),  # 'Ċ'
    pytest.param("llama-bpe", 256, "␣␣", id="bpe-spaces"),  # 'ĠĠ'
    pytest.param("llama-spm", 10630, "␣Vi", id="spm-word"),  # '▁Vi'
    pytest.param("llama-spm", 29871, "␣", id="spm-space"),
    pytest.param("llama-spm", 35, "<0x20>", id="spm-byte-piece"),  # kept as the byte it is
    pytest.param("llama-spm", 1, "<s>", id="spm-special"),
])
def test_readable(vocabs, model, token_id, shown):
    vocab = vocabs[model]
    assert readable(vocab.tokens[token_id], piece_style(vocab.tokens)) == shown


def test_readable_plain_keeps_the_piece():
    assert piece_style(["##ing", "café"]) == PLAIN
    assert readable("##ing", PLAIN) == "##ing"
    assert readable("a\tb", PLAIN) == "a→b"


@pytest.mark.parametrize(("text", "expected"), [
    ("It's raining.", True),
    ("Hôm nay trời mưa to quá, tôi không muốn ra ngoài.", True),
    ("Der Zug nach München hat heute leider 25 Minuten Verspätung.", True),
    ("Hello", False),  # too short
    ("      word", False),  # whitespace runs are edge cases, not prompts
    ("co\u00adoperate", False),  # a soft hyphen
    ("<|endoftext", False),  # a special token's spelling
    ("1_000_000 and 2_000", False),  # mostly not letters
    ("tab\tseparated words", False),
])
def test_prompt_like(text, expected):
    assert prompt_like(text) is expected


def _mismatch(corpus: str, case_id: str, text: str, oracle: list[int], backend: list[int], **kw) -> Mismatch:
    return Mismatch.of(model="m", corpus=corpus, case_id=case_id, tags=kw.pop("tags", {}), oracle="o", backend="b",
                    cls="merge-order", evidence="", stage="model", first_diff=0, text=text, oracle_ids=oracle,
                    backend_ids=backend, oracle_pieces=[f"▁{i}" for i in oracle],
                    backend_pieces=[f"▁{i}" for i in backend], **kw)


def test_most_telling_prefers_short_prompts_of_the_prose_corpus():
    pool = [
        _mismatch("edge", "ws-1", "      word", [1], [2]),
        _mismatch("edge", "lookalike-1", "hello world today", [1], [2], tags={"kind": "special-lookalike"}),
        _mismatch("edge", "contractions-1", "we'll see it", [1], [2]),
        _mismatch("multilingual", "en-0001", "The 7:45 train to Leeds was cancelled again, so I took the bus.", [1],
                  [2]),
        _mismatch("multilingual", "en-0004", "It's raining.", [1], [2]),
    ]
    assert most_telling(pool).case_id == "en-0004"
    assert most_telling(pool[:3]).case_id == "contractions-1"
    assert most_telling(pool[:1]).case_id == "ws-1"  # nothing prompt-like: the shortest there is


def test_comparison_cuts_long_equal_runs_and_aligns_the_difference():
    oracle = list(range(100, 112)) + [7, 8] + list(range(200, 210))
    backend = list(range(100, 112)) + [9] + list(range(200, 210))
    m = _mismatch("multilingual", "x", "t", oracle, backend)
    blocks = comparison(m, SPM, context=3)
    assert [(b.kind, b.skipped, b.start) for b in blocks] == [
        ("gap", 9, 0), ("same", 0, 9), ("diff", 0, 12), ("same", 0, 14), ("gap", 7, 17)]
    assert [t.id for t in blocks[2].oracle] == [7, 8] and [t.id for t in blocks[2].backend] == [9]
    lines = comparison_lines(mismatch_comparison(m, SPM), columns=100, indent=0)
    assert lines == [
        "first difference at token 12",
        "oracle   … 9 same 109  110  111  7  8  200  201  202  … 7 same",
        "                  ␣109 ␣110 ␣111 ␣7 ␣8 ␣200 ␣201 ␣202",
        "backend  … 9 same 109  110  111  9     200  201  202  … 7 same",
        "                  ␣109 ␣110 ␣111 ␣9    ␣200 ␣201 ␣202",
        "                                 ^^^^^",
    ]


def test_comparison_wraps_a_long_difference_at_the_width():
    m = _mismatch("multilingual", "x", "t", list(range(1000, 1040)), list(range(2000, 2030)))
    lines = comparison_lines(mismatch_comparison(m, SPM), columns=60)
    assert max(len(line) for line in lines) <= 60
    assert lines[1] == "  oracle   1000  1001  1002  1003  1004  1005  1006  1007"
    assert "  backend  (none)" in lines  # the oracle's last tokens have no counterpart
    assert sum(line.startswith("  oracle") for line in lines) == 5
