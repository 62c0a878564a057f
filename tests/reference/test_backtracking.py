"""The `bpe` crate's backtracking encoder (tokparity/reference/backtracking.py) as the
``model.backtracking`` variant swaps it in: rank BPE on a vocabulary whose every token encodes to
itself, as the crate claims (Qwen3's), and other ids on Llama 3's, where 588 tokens past cl100k's do
not (quicktok-v1 and a blind port of the crate give these ids: tests/diagnose)."""

from __future__ import annotations

import random

import pytest

from tokparity.corpus import load_corpus
from tokparity.diagnose.search import Diagnoser
from tokparity.reference import RefTokenizer
from tokparity.reference.backtracking import Backtracking
from tokparity.vocab import load_vocab

BACKTRACKING = ("model.backtracking",)


def _diagnoser(zoo, model: str, role: str) -> Diagnoser:
    return Diagnoser(RefTokenizer(load_vocab(zoo(model).files[role])), False, False)


def test_rank_bpe_where_every_token_encodes_to_itself(zoo):
    diagnoser = _diagnoser(zoo, "qwen3", "tokenizer_json")
    texts = [c.text for c in load_corpus("multilingual")]
    differ = [t for t in texts if diagnoser.encode_remembered(BACKTRACKING, t) != diagnoser.encode_remembered((), t)]
    assert len(texts) > 300 and differ == []


def test_other_ids_on_llama_3(zoo):
    for role in ("gguf", "tokenizer_json"):  # (llama.cpp's pipeline and tokenizers')
        diagnoser = _diagnoser(zoo, "llama-bpe", role)
        assert diagnoser.encode_remembered((), " každou") == [16909, 12453, 114541]
        assert diagnoser.encode_remembered(BACKTRACKING, " každou") == [103870, 283]
        texts = [c.text for c in load_corpus("multilingual")]
        differ = {t[:12] for t in texts if diagnoser.encode_remembered(BACKTRACKING, t) != diagnoser.encode_remembered((), t)}
        assert len(differ) == 5, differ  # cs, tr, ru, bg, sr (the blind port and quicktok-v1 differ on these five)


def _crates_build(tokens: list[str | None]) -> list[tuple[int, int]]:
    """The crate's ``from_dictionary`` as written (crates/bpe/src/byte_pair_encoding.rs): every
    token's parts found in rank order, with the merges of the tokens before it only."""
    ids: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if t and t not in ids:
            ids[t] = i

    def prefix(text: str) -> int:
        return next((ids[text[:n]] for n in range(len(text) - 1, 0, -1) if text[:n] in ids), -1)

    parts: list[tuple[int, int]] = []
    merged: dict[tuple[int, int], int] = {}

    def valid(left: int, right: int) -> bool:
        limit = None
        while True:
            m = merged.get((left, right))
            if m is not None and (limit is None or m < limit):
                return False
            if left > right:
                limit, left = left, parts[left][1]
                if left == limit:
                    limit, right = right + 1, parts[right][0]
                    if right + 1 == limit:
                        return True
            else:
                limit, right = right + 1, parts[right][0]
                if right + 1 == limit:
                    limit, left = left, parts[left][1]
                    if left == limit:
                        return True

    for i, t in enumerate(tokens):
        found = (i, i)
        if t and ids[t] == i:
            first = prefix(t)
            while first >= 0:
                second = ids.get(t[len(tokens[first] or ""):])
                if second is not None and first < i and second < i and valid(first, second):
                    found = (first, second)
                    merged[first, second] = i
                    break
                first = prefix(tokens[first] or "")
        parts.append(found)
    return parts


def test_parts_are_the_crates_whatever_is_asked_first():
    """Worked out token by token, in any order, a token's parts are those the crate's build in
    rank order finds (random vocabularies over three letters, ranks shuffled, gaps and a token twice)."""
    rng = random.Random(5)
    for _ in range(300):
        words = {"".join(rng.choice("abc") for _ in range(rng.randrange(2, 6))) for _ in range(rng.randrange(3, 30))}
        tokens: list[str | None] = ["a", "b", "c"] + sorted(words)
        rng.shuffle(tokens)
        tokens += [None, rng.choice([t for t in tokens if t])]
        want = _crates_build(tokens)
        order = list(range(len(tokens)))
        rng.shuffle(order)
        encoder = Backtracking(tokens)
        assert {i: encoder.parts(i) for i in order} == dict(enumerate(want)), tokens


def test_a_chain_deeper_than_the_stack():
    """Tokens a, aa, …, a×1,500: the parts of the longest, asked first, need those of the whole chain
    below it, deeper than Python's stack; the encoder then works every token's parts out in rank
    order instead, and cuts the text as the crate's build would have it."""
    tokens: list[str | None] = ["a" * n for n in range(1, 1501)] + ["b"]
    with pytest.raises(RecursionError):
        Backtracking(tokens).parts(1499)
    text = "a" * 1501 + "b"
    lazy, in_order = Backtracking(tokens), Backtracking(tokens)
    for token in range(len(tokens)):
        in_order.parts(token)
    got = lazy.split(text)
    assert got == in_order.split(text) and "".join(got) == text and len(got) == 3
    assert [lazy.parts(i) for i in range(len(tokens))] == _crates_build(tokens)


def test_a_deferred_segmenter_whose_build_failed_raises_the_same_error_without_growing():
    """A build that failed fails every split with its error. Raised again as it was, the error
    kept each raise's frames (tests/chat/test_kept_refusals.py)."""
    import gc

    from tokparity.reference.greedy import Deferred

    def build():
        raise ValueError("no merges")

    deferred = Deferred(build)

    def split(times: int) -> int:
        for _ in range(times):
            with pytest.raises(ValueError, match="no merges"):
                deferred.split("a")
        gc.collect()
        return len(gc.get_objects())

    before = split(50)
    assert split(200) - before < 100
