"""A copy of a pipeline that changes only its split shares its parent's word cache
(``tokparity.diagnose.candidate.fork``): every variant's ids must be the ones it gives with a cold
cache of its own, and the parent's ids must be untouched by what its copies cached."""

from __future__ import annotations

import pytest

from tokparity.diagnose import Diagnoser
from tokparity.diagnose.candidate import fork
from tokparity.reference import RefTokenizer
from tokparity.reference.llama import LlamaBpe
from tokparity.vocab import load_vocab

# Words that the split variants cut otherwise (digits, contractions, a letter of a newer Unicode,
# special-token text that no split leaves whole but "no split" looks up whole, spaces and tabs).
TEXTS = [
    "Hello world, it's 12345 o'clock", "I'M HERE   and\tthere\n\nnow", "<|eot_id|>", "a<|eot_id|>b",
    "x \U0001d2c0 y 1\U0001d2c0", "naïve café 東京 2024年", "  leading and trailing  ", "we'LL see, they'Re",
    "\u0085a \ufeffb \u00a0c", "Ⅻ chapter ⅳ", "",
]


@pytest.fixture(scope="module")
def model(zoo):
    return zoo("llama-bpe").primary[1]


def variant_ids(path, cached: bool) -> dict[str, list]:
    """Every single variant's ids on TEXTS, and the reference's (key ""). ``cached``: with the word
    cache, the reference's own ids asked first on every text (its cache full before any copy
    shares it) and again after (they must not have changed); else with no word cache at all."""
    tokenizer = RefTokenizer(load_vocab(path))
    if not cached:
        tokenizer.pipeline.cache = None  # (every copy then merges every word afresh)
    diagnoser = Diagnoser(tokenizer)
    before = [diagnoser.encode((), t) for t in TEXTS]
    out = {key: [diagnoser.encode((key,), t) for t in TEXTS] for key in diagnoser.variants}
    assert [diagnoser.encode((), t) for t in TEXTS] == before
    return out | {"": before}


def test_split_copies_share_the_cache_and_nothing_else_does(model):
    p = RefTokenizer(load_vocab(model)).pipeline
    assert isinstance(p, LlamaBpe) and p.cache is not None
    assert fork(p, pretokenizer=p.pretokenizer).cache is p.cache
    assert fork(p).cache is not p.cache
    assert fork(p, pretokenizer=p.pretokenizer, whole_words={}).cache is not p.cache


def test_shared_cache_gives_every_variant_its_own_ids(model):
    cached, uncached = variant_ids(model, True), variant_ids(model, False)
    assert cached.keys() == uncached.keys() and len(cached) > 40
    assert {k for k in cached if cached[k] != uncached[k]} == set()
    # (the texts tell the split variants apart from the reference)
    assert {"pretokenizer.none", "pretokenizer.whitespace", "pretokenizer.digits", "pretokenizer.gpt-2",
            "pretokenizer.regex-engine:ecmascript", "unicode.tables:3.2"} <= {k for k in cached if cached[k] != cached[""]}
