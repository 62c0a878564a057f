"""``every_token_bytes``: every id's bytes in one pass, exactly what ``token_bytes`` gives per id."""

from __future__ import annotations

import pytest

from tokparity.vocab import Vocab, load_vocab
from tokparity.vocab.model import TokenType
from tokparity.vocab.token_bytes import every_token_bytes, token_bytes


def one_by_one(vocab: Vocab) -> list[bytes | None]:
    out: list[bytes | None] = []
    for i in range(vocab.size):
        try:
            out.append(token_bytes(vocab, i))
        except Exception:
            out.append(None)
    return out


@pytest.mark.parametrize("model", ["llama-spm", "llama-bpe", "botchan-unigram", "bert-bge", "rwkv-world", "gemma-4",
                                   "gpt4o", "nomic-bert-moe", "spm-unigram-user-symbols"])
def test_the_same_bytes_as_one_id_at_a_time(zoo, model):
    spelt = every_token_bytes(load_vocab(zoo(model).primary[1]))
    assert spelt == one_by_one(load_vocab(zoo(model).primary[1]))


@pytest.mark.parametrize("algorithm", ["spm", "bpe", "wpm"])
def test_a_token_it_cannot_spell_is_none_and_the_others_stay(algorithm):
    """A lone surrogate (a JSON file may hold ``"\\ud800"``) has no UTF-8: that token alone is None."""
    vocab = Vocab(algorithm, ["a", "\ud800b", "<0xZZ>", "c"],
                  token_types=[TokenType.NORMAL, TokenType.NORMAL, TokenType.BYTE])  # (a list shorter than the tokens)
    spelt = every_token_bytes(vocab)
    assert spelt[0] == b"a" and spelt[3] == b"c" and spelt[1] in (None, one_by_one(vocab)[1])
    assert spelt == one_by_one(vocab)
