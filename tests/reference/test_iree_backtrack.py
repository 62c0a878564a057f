"""The port of IREE's BPE encoder (tokparity/reference/iree_backtrack.py) against the real package,
iree-tokenizer 0.3.0, on the committed corpora: each text is pre-tokenized by the tokenizers
library's own pre-tokenizer of the model's tokenizer.json, the port encodes each word, and the
ids joined must be the package's ids for the whole text.

Texts left out: those that hold an added token's text (the package matches those before its
pre-tokenizer, the pre-tokenizer here does not). Where the package cut the ids short (its encode
keeps half the text's bytes plus 16 ids: tests/run/test_iree.py), the port's first ids must be
the ones it kept; those texts are counted apart ("cut").

Where the package's own pre-tokenizer splits a text otherwise than the tokenizers library's
(``'\\n \\n'`` is one word to tokenizers, ``'\\n'`` and ``' \\n'`` to IREE; the two class some
characters new in Unicode 16 otherwise), the package itself is asked for its words
(``_iree_words``) and the port encodes those. That is counted apart ("iree-words"): it is the
pre-tokenizer's difference, not the encoder's.
"""

from __future__ import annotations

import json
import random
import unicodedata
from collections import Counter

import pytest

iree_tokenizer = pytest.importorskip("iree.tokenizer", reason="iree-tokenizer is not installed: pip install -e '.[test]'")
tokenizers = pytest.importorskip("tokenizers")

from tokparity.corpus import load_corpus  # noqa: E402
from tokparity.reference.iree_backtrack import BYTE_CHARS, IreeBackTrack  # noqa: E402

CORPORA = ("multilingual", "edge", "emoji", "seams")
MODELS = ("llama-bpe", "qwen3")
PROBE_MAX_BYTES = 300  # _iree_words builds a vocabulary of every substring: short texts only


class Models:
    """One model's tokenizer.json as the port, the package and the tokenizers library read it."""

    def __init__(self, path):
        self.path = path
        self.port = IreeBackTrack.from_tokenizer_json(path)
        self.package = iree_tokenizer.Tokenizer.from_file(str(path))
        self.hf = tokenizers.Tokenizer.from_file(str(path))
        self.vocab = self.hf.get_vocab(with_added_tokens=True)
        self.added = [t.content for t in self.hf.get_added_tokens_decoder().values()]

    def words(self, text: str) -> list[str]:
        """The tokenizers library's words of ``text``, in the byte alphabet."""
        if self.hf.normalizer is not None:
            text = self.hf.normalizer.normalize_str(text)
        return [w for w, _ in self.hf.pre_tokenizer.pre_tokenize_str(text)]

    def port_ids(self, words: list[str]) -> list[int]:
        return [self.vocab[piece] for w in words for piece in self.port.split(w)]

    def package_ids(self, text: str) -> tuple[list[int], bool]:
        """The package's ids, and whether it may have cut them short (as many as it keeps at most:
        a text whose ids are exactly that many is taken as cut too)."""
        ids = self.package.encode(text, add_special_tokens=False)
        return ids, len(ids) == len(text.encode()) // 2 + 16


@pytest.fixture(scope="module")
def models(zoo):
    cache: dict[str, Models] = {}

    def get(name: str) -> Models:
        if name not in cache:
            cache[name] = Models(zoo(name).files["tokenizer_json"])
        return cache[name]

    return get


def _iree_words(m: Models, text: str) -> list[str]:
    """The package's own words of ``text``: its pre-tokenizer and normalizer with, for a model, every
    substring of the text as a token and ``ignore_merges``, so that each word is one token."""
    vocab = {c: i for i, c in enumerate(BYTE_CHARS)}
    for form in {text, unicodedata.normalize("NFC", text)}:
        chars = "".join(BYTE_CHARS[b] for b in form.encode())
        for i in range(len(chars)):
            for j in range(i + 2, len(chars) + 1):
                vocab.setdefault(chars[i:j], len(vocab))
    config = json.loads(m.path.read_text(encoding="utf-8"))
    config.update(added_tokens=[], post_processor=None, decoder=None)
    config["model"] = {"type": "BPE", "vocab": vocab, "merges": [], "ignore_merges": True}
    probe = iree_tokenizer.Tokenizer.from_str(json.dumps(config))
    texts = {i: t for t, i in vocab.items()}
    return [texts[i] for i in probe.encode(text, add_special_tokens=False)]


def _compare(m: Models, corpus: str) -> tuple[Counter, list[str]]:
    """Counts of the corpus's texts by outcome, and the texts where the port and the package differ."""
    counts: Counter = Counter()
    differ: list[str] = []
    for case in load_corpus(corpus):
        text = case.text
        if any(a in text for a in m.added):
            counts["added-token"] += 1
            continue
        package, cut = m.package_ids(text)
        port = m.port_ids(m.words(text))
        if cut:
            counts["cut"] += 1
            if port[:len(package)] == package:
                counts["cut-prefix-agrees"] += 1
            else:
                differ.append(f"{case.id} (cut): {text[:60]!r}")
            continue
        counts["compared"] += 1
        if port == package:
            counts["agree"] += 1
            if package != m.hf.encode(text, add_special_tokens=False).ids:
                counts["not-bpe"] += 1  # the package is not rank BPE here, and the port is not either
            continue
        if len(text.encode()) <= PROBE_MAX_BYTES:
            words = _iree_words(m, text)
            if words != m.words(text) and m.port_ids(words) == package:
                counts["agree"] += 1
                counts["iree-words"] += 1
                continue
        differ.append(f"{case.id}: {text[:60]!r}")
    return counts, differ


# The counts measured: (compared, agree on the package's words only, not rank BPE). Every text agrees.
EXPECTED = {
    ("llama-bpe", "multilingual"): (312, 0, 19),
    ("llama-bpe", "edge"): (872, 1, 7),
    ("llama-bpe", "emoji"): (4922, 0, 0),
    ("llama-bpe", "seams"): (1518, 7, 0),
    ("qwen3", "multilingual"): (347, 0, 1),
    ("qwen3", "edge"): (863, 1, 2),
    ("qwen3", "emoji"): (5026, 0, 0),
    ("qwen3", "seams"): (1518, 0, 0),
}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("corpus", CORPORA)
def test_every_text_gets_the_packages_ids(models, model, corpus):
    counts, differ = _compare(models(model), corpus)
    assert differ == [], (counts, differ[:10])
    assert counts["agree"] == counts["compared"] and counts["cut-prefix-agrees"] == counts["cut"]
    assert (counts["compared"], counts["iree-words"], counts["not-bpe"]) == EXPECTED[(model, corpus)], counts


@pytest.mark.parametrize("text, iree, bpe", [
    (" backspace", ["Ġbacks", "pace"], ["Ġback", "space"]),
    (" každou", ["ĠkaÅ¾d", "ou"], ["Ġka", "Å¾", "dou"]),
])
def test_the_port_is_not_rank_bpe(models, text, iree, bpe):
    """Two words of Llama 3's where the package's tokens are not rank BPE's: the port's are the package's."""
    m = models("llama-bpe")
    assert [m.hf.id_to_token(i) for i in m.package.encode(text, add_special_tokens=False)] == iree
    assert m.hf.encode(text, add_special_tokens=False).tokens == bpe
    assert m.port.split(m.words(text)[0]) == iree


@pytest.mark.parametrize("model", MODELS)
def test_words_glued_from_tokens(models, model):
    """Words made of two to five ASCII letter tokens glued together (fixed seed): a harder test of
    the backtracking than prose. The package is not rank BPE on 173 of the 3000 words on Llama 3's
    vocabulary, on 55 on Qwen3's; the port gives its ids on every word."""
    m = models(model)
    rng = random.Random(20260)
    letters = sorted(t.lstrip("Ġ") for t in m.vocab if t.lstrip("Ġ").isalpha() and t.lstrip("Ġ").isascii())
    words = []
    while len(words) < 3000:
        word = ("Ġ" if rng.random() < 0.6 else "") + "".join(rng.choice(letters) for _ in range(rng.randint(2, 5)))
        words.append(word)
    texts = [w.replace("Ġ", " ") for w in words]  # (the letters are ASCII: their own characters)
    got = m.package.encode_batch(texts, add_special_tokens=False)
    compared = not_bpe = 0
    for word, text, package in zip(words, texts, got):
        if len(package) == len(text.encode()) // 2 + 16 or m.words(text) != [word]:
            continue
        compared += 1
        assert m.port_ids([word]) == package, (word, [m.hf.id_to_token(i) for i in package], m.port.split(word))
        not_bpe += package != m.hf.encode(text, add_special_tokens=False).ids
    assert compared > 2900 and not_bpe >= {"llama-bpe": 150, "qwen3": 45}[model], (compared, not_bpe)


@pytest.mark.parametrize("model", MODELS)
def test_words_past_the_backtracking_limit(models, model):
    """A word of more than 4095 bytes takes the window path: rank BPE over a window that merges
    what it holds whenever its front token is emitted, so not rank BPE either, nor backtracking."""
    m = models(model)
    assert m.port.max_backtrack_bytes == 4095
    rng = random.Random(7)
    letters = sorted(t for t in m.vocab if t.isalpha() and t.isascii())
    for _ in range(2):
        text = "".join(rng.choice(letters) for _ in range(1200))
        assert len(text) > 4095
        package, cut = m.package_ids(text)
        assert not cut
        assert m.port.split_ids(text) == package
        assert package != m.hf.encode(text, add_special_tokens=False).ids
        assert m.port._backtrack(text.encode()) != package
