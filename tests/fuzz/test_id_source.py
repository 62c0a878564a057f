"""fuzz --ops decode/stream draws id sequences from the vocabulary (tokparity.fuzz.ids.IdSource)."""

from __future__ import annotations

from tokparity.fuzz.ids import IdSource
from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType
from tokparity.zoo import resolve_model


def test_no_sequence_holds_a_gap_of_the_vocabulary(zoo):
    """o200k's tokenizer.json has 17 gaps (``[PAD200002]``…), unused ids no decoder has text for.
    `fuzz gpt4o --ops decode` drew them and reported what each engine wrote there (3 sequences,
    unexplained, on ref and hf-gguf): the oracle's gap, not an engine's bug."""
    zoo("gpt4o")
    vocab = load_vocab(resolve_model("gpt4o").primary[1])
    gaps = {i for i, t in enumerate(vocab.token_types) if t == TokenType.UNUSED}
    assert len(gaps) >= 17
    source = IdSource(vocab, 0)
    drawn = [i for _ in range(20000) for i in source.next().ids]
    assert len(set(drawn)) > 10000 and not gaps & set(drawn)
