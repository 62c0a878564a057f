"""Copies of a pipeline share their parent's word cache where a word's ids cannot differ: a copy
that changes only the split (``tokparity.diagnose.candidate.fork``), a UGM model that differs only
in its unknown id (``UgmModel.word_cache``). Every variant's ids must be the ones it gives with no
word cache at all, and the reference's must be untouched by what its copies cached."""

from __future__ import annotations

import pytest

from tokparity.diagnose import Diagnoser
from tokparity.diagnose.candidate import fork
from tokparity.reference import RefTokenizer
from tokparity.reference.llama import LlamaBpe, LlamaUgm
from tokparity.reference.sentencepiece import SentencePieceUnigram
from tokparity.vocab import load_vocab

# Words that the split variants cut otherwise (digits, contractions, letters of a newer Unicode,
# special-token text that no split leaves whole but "no split" looks up whole, spaces and tabs),
# and characters that a small unigram vocabulary does not have (unknown stretches).
TEXTS = [
    "Hello world, it's 12345 o'clock", "I'M HERE   and\tthere\n\nnow", "<|eot_id|>", "a<|eot_id|>b",
    "x \U0001d2c0 y 1\U0001d2c0", "naïve café 東京 2024年", "  leading and trailing  ", "we'LL see, they'Re",
    "\u0085a \ufeffb \u00a0c", "Ⅻ chapter ⅳ", "", "The 7:45 train to Leeds", "東京 and 東京 again, 🙂🙂 x🙂y",
    "\U00013000 \ue000x \U00016130 a\U00010d40b \U00013000\U00013000",
]


def variant_ids(path, keys: list[str], cached: bool) -> dict[str, list]:
    """Each of ``keys`` alone on TEXTS, and the reference (key ""). ``cached``: with the word
    caches, the reference's own ids asked first on every text (its cache full before any copy
    shares it) and again after (they must not have changed); else with no word cache at all."""
    tokenizer = RefTokenizer(load_vocab(path))
    if not cached:  # (every word then segmented afresh by every copy)
        if isinstance(tokenizer.pipeline, (LlamaUgm, SentencePieceUnigram)):
            tokenizer.pipeline.model.word_cache = None
        else:
            tokenizer.pipeline.cache = None
    diagnoser = Diagnoser(tokenizer)
    before = [diagnoser.encode((), t) for t in TEXTS]
    out = {key: [diagnoser.encode((key,), t) for t in TEXTS] for key in keys or diagnoser.variants}
    assert [diagnoser.encode((), t) for t in TEXTS] == before
    return out | {"": before}


def test_split_copies_share_the_cache_and_nothing_else_does(zoo):
    p = RefTokenizer(load_vocab(zoo("llama-bpe").primary[1])).pipeline
    assert isinstance(p, LlamaBpe) and p.cache is not None
    assert fork(p, pretokenizer=p.pretokenizer).cache is p.cache
    assert fork(p).cache is not p.cache
    assert fork(p, pretokenizer=p.pretokenizer, whole_words={}).cache is not p.cache


def test_split_variants_give_their_own_ids(zoo):
    path = zoo("llama-bpe").primary[1]
    cached, uncached = variant_ids(path, [], True), variant_ids(path, [], False)
    assert cached.keys() == uncached.keys() and len(cached) > 40
    assert {k for k in cached if cached[k] != uncached[k]} == set()
    # (the texts tell the split variants apart from the reference)
    assert {"pretokenizer.none", "pretokenizer.whitespace", "pretokenizer.digits", "pretokenizer.gpt-2",
            "pretokenizer.regex-engine:ecmascript", "unicode.tables:3.2"} <= {k for k in cached if cached[k] != cached[""]}


@pytest.mark.parametrize("role", ["gguf", "spm_model"])  # (llama.cpp's UGM pipeline, SentencePiece's)
@pytest.mark.parametrize("model", ["botchan-unigram", "nomic-bert-moe"])
def test_another_unknown_id_gives_its_own_ids(zoo, model, role):
    path = zoo(model).files[role]
    keys = ["specials.ids:unk=2", "specials.ids:unk=1", "normalizer.none"]
    cached, uncached = variant_ids(path, keys, True), variant_ids(path, keys, False)
    assert cached == uncached
    unk = RefTokenizer(load_vocab(path)).pipeline.model.unk_id
    assert sum(ids.count(unk) for ids in cached[""]) >= 3  # (unknown stretches to write otherwise)
    assert cached["specials.ids:unk=2"] == [[2 if i == unk else i for i in ids] for ids in cached[""]]
