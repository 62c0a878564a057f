"""BPE ties (issue 16, item 3): a segmentation that only another choice among merges of equal
priority gives is ``model.viterbi-tie``, reported apart and never failing a run; and a real bug
whose output happens to be such a choice keeps its cause.

BPE merges the best candidate pair first, and every library (SentencePiece, llama.cpp,
tokenizers, tiktoken) takes the leftmost of equal-priority candidates. Such candidates are
common: the same pair twice ("..." holds ".." at two places, in any BPE), and in SentencePiece
BPE two pieces of equal score (Llama 2's whitespace pieces "▁▁" … "▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁" all score
-1e9). The diagnosis names a tie when the reference with its ties broken rightmost first
(``bpe.RightmostFirst``) gives the backend's ids exactly and the two sides hold the same text
where they differ (tokparity/diff/ties.py ``merge_tie``).

No library breaks ties rightmost first, so the engines here are hand-written: llama-spm's through
examples/engines/greedy_engine.py (``--segment merges --ties rightmost``, its own SentencePiece merge
loop, not tokparity's), and a rank-based one below (GPT-2's ``bpe()`` loop).
"""

from __future__ import annotations

import random
import sys

import pytest
from mutation import EXAMPLES, FOCUS, Mutation, check_single, compare_runs, engine

from tokparity.diagnose import Diagnoser
from tokparity.reference import RefTokenizer
from tokparity.reference.bpe import RightmostFirst, merge_word, merge_word_heap
from tokparity.reference.spm import spm_merge
from tokparity.vocab import load_vocab

SPM = ("greedy_engine.py", "{gguf}", "--file-space-prefix", "--segment", "merges")
RUNS = ("focus:repeat-runs",)
RIGHTMOST = Mutation("model.viterbi-tie", "llama-spm", engine(*SPM, "--ties", "rightmost"), engine(*SPM), RUNS)
# The write-up's greedy longest match writes some runs as the rightmost tie-breaking would
# ("............" as '▁...'+'.........'); its proven root cause must claim them.
GREEDY = Mutation("model.greedy-longest-match", "llama-spm", engine("greedy_engine.py", "{gguf}", "--file-space-prefix"),
                  engine(*SPM), RUNS)


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([RIGHTMOST, GREEDY], tmp_path_factory.mktemp("corpora"), zoo)


def test_rightmost_ties_are_ties_llama_spm(runs):
    """Every mismatch of an engine that breaks ties rightmost first is a tie, counted apart (not
    unexplained, not failing); its leftmost twin agrees on every case."""
    run = runs[RIGHTMOST.group]
    check_single(run, RIGHTMOST, stage_level=True)
    mismatches = run.mismatches(RIGHTMOST.bug)
    summary = run.summary(RIGHTMOST.bug)
    assert summary.ties == summary.mismatches == len(mismatches) >= 100
    assert summary.unexplained == 0
    assert all(m.cls == "viterbi-tie" for m in mismatches)
    assert "rightmost first" in mismatches[0].cause_evidence


def test_greedy_keeps_its_cause_where_it_looks_like_a_tie(runs):
    """A real bug is never masked: the greedy engine's mismatches, ties by coincidence included,
    carry greedy longest match, and none is counted as a tie."""
    run = runs[GREEDY.group]
    check_single(run, GREEDY)
    summary = run.summary(GREEDY.bug)
    assert summary.ties == 0
    assert not any(m.cause == "model.viterbi-tie" for m in run.mismatches(GREEDY.bug))
    reclaimed = [m for m in run.mismatches(GREEDY.bug) if "merges of equal priority" in m.cause_evidence]
    assert reclaimed, "the corpus no longer has a greedy case that a tie also explains"
    assert summary.root_cause.explains == summary.mismatches


# --- distinct pieces of equal score: Llama 2's whitespace pieces ------------------------------------


@pytest.fixture(scope="module")
def llama_spm(zoo):
    return RefTokenizer(load_vocab(zoo("llama-spm").files["gguf"]))


def test_equal_score_pieces_tie_llama_spm(llama_spm):
    """18 '▁' between two words: every whitespace piece scores -1e9, so the run's merges are all
    ties; leftmost first writes the 16-space piece first, rightmost first the 2-space piece."""
    sys.path.insert(0, str(EXAMPLES))
    from greedy_engine import GreedyEngine

    vocab = llama_spm.vocab
    scores = {vocab.scores[vocab.token_to_id()["\u2581" * k]] for k in range(2, 17)}
    assert scores == {-1e9}, "Llama 2's whitespace pieces no longer share one score"
    text = "a" + " " * 19 + "b"
    oracle = llama_spm.encode(text)
    backend = GreedyEngine(vocab, file_space_prefix=True, segment="merges", ties="rightmost").encode(text)
    assert [vocab.tokens[i] for i in backend] == ["\u2581a", "\u2581" * 2, "\u2581" * 16, "\u2581b"]
    assert backend != oracle
    cause = Diagnoser(llama_spm).diagnose(text, oracle, backend, "rightmost")
    assert cause.name == "model.viterbi-tie" and not cause.reproduced, cause


def test_not_a_tie_when_the_text_differs(llama_spm):
    """The same ids as a flipped tie-breaking are needed, not only a shorter reading: an engine
    that drops a space is never a tie."""
    text = "Wait.....what"
    oracle = llama_spm.encode(text)
    dropped = llama_spm.encode("Wait....what")
    cause = Diagnoser(llama_spm).diagnose(text, oracle, dropped, "drops")
    assert cause.name != "model.viterbi-tie", cause


# --- rank-based BPE: the same pair twice ------------------------------------------------------------


def gpt2_bpe(symbols: list[str], ranks: dict, rightmost: bool) -> list[str]:
    """GPT-2's ``bpe()``: the lowest-rank pair, then every occurrence of it merged in one sweep,
    left to right (the original) or right to left."""
    word = list(symbols)
    while len(word) > 1:
        pairs = {(a, b) for a, b in zip(word, word[1:])}
        best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if best not in ranks:
            break
        order = range(len(word) - 2, -1, -1) if rightmost else range(len(word) - 1)
        merged: list[str] = list(word)
        taken: set[int] = set()
        for i in order:
            if (word[i], word[i + 1]) == best and not {i, i + 1} & taken:
                taken |= {i, i + 1}
                merged[i], merged[i + 1] = word[i] + word[i + 1], ""
        word = [w for w in merged if w]
    return word


@pytest.fixture(scope="module")
def gpt2(zoo):
    return RefTokenizer(load_vocab(zoo("gpt-2").files["gguf"]))


def test_rank_bpe_rightmost_ties_gpt2(gpt2, zoo):
    """GPT-2 (merge ranks) with its equal-rank merges swept right to left: every mismatch a tie, the
    left-to-right twin agreeing everywhere."""
    p = gpt2.pipeline
    ids = p.token_to_id

    def engine(text: str, rightmost: bool) -> list[int]:
        return [ids[t] for w in p.pre_tokenize(text) for t in gpt2_bpe(list(w), p.ranks, rightmost)]

    diagnoser = Diagnoser(gpt2)
    texts = [r["text"] for r in FOCUS["repeat-runs"](zoo)]
    names = []
    for text in texts:
        oracle = gpt2.encode(text)
        assert engine(text, rightmost=False) == oracle, text
        backend = engine(text, rightmost=True)
        if backend != oracle:
            names.append(diagnoser.diagnose(text, oracle, backend, "rightmost").name)
    print(f"MUTATION model.viterbi-tie | gpt2_bpe right to left | gpt-2 | {len(names)} | "
          f"{names.count('model.viterbi-tie')}")
    assert len(names) >= 50
    assert names.count("model.viterbi-tie") >= 0.95 * len(names), names


# --- the switch itself --------------------------------------------------------------------------------


def test_switch_breaks_ties_the_other_way():
    assert spm_merge(list("..."), {"..": -1.0}).symbols == ["..", "."]
    assert spm_merge(list("..."), RightmostFirst({"..": -1.0})).symbols == [".", ".."]
    ranks = {("a", "a"): 0}
    assert merge_word(list("aaa"), ranks).symbols == ["aa", "a"]
    assert merge_word(list("aaa"), RightmostFirst(ranks)).symbols == ["a", "aa"]
    assert merge_word_heap(list("aaa"), RightmostFirst(ranks)) == ["a", "aa"]


def test_heap_and_readable_loop_agree_rightmost():
    """merge_word_heap is llama.cpp's loop and merge_word the readable one: with ties broken
    rightmost first they still agree."""
    rng = random.Random(16)
    letters = "abc"
    ranks = RightmostFirst()
    pieces = list(letters)
    for _ in range(12):
        pair = (rng.choice(pieces), rng.choice(pieces))
        if pair not in ranks:
            ranks[pair] = len(ranks)
            pieces.append(pair[0] + pair[1])
    for _ in range(500):
        word = [rng.choice(letters) for _ in range(rng.randint(1, 12))]
        assert merge_word(word, ranks).symbols == merge_word_heap(word, ranks), word
