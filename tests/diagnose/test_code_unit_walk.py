"""``model.greedy-by-code-units`` refines ``model.greedy-longest-match`` (``Variant.refines``): on a
text where the two walks give the same ids, the simpler one is named and the walk is no
alternative. It is named only where the walk by UTF-16 code units shows (@lenml/llama2-tokenizer:
tests/diagnose/test_third_party.py)."""

from __future__ import annotations

from tokparity.diagnose.search import Diagnoser
from tokparity.reference import RefTokenizer
from tokparity.vocab import load_vocab

GREEDY, WALK = ("model.greedy-longest-match",), ("model.greedy-by-code-units",)


def _named(diagnoser: Diagnoser, text: str, keys: tuple[str, ...]) -> set[tuple[str, ...]]:
    base = diagnoser.encode((), text)
    cause = diagnoser.diagnose(text, base, diagnoser.encode(keys, text), "x")
    return {cause.keys, *cause.alternatives}


def test_the_walk_is_named_only_where_it_shows(zoo):
    diagnoser = Diagnoser(RefTokenizer(load_vocab(zoo("lenml-llama2").files["tokenizer_json"])))
    text = " ! 🦙"  # (no piece holds 🦙: both walks write its bytes)
    assert diagnoser.encode(WALK, text) == diagnoser.encode(GREEDY, text) != diagnoser.encode((), text)
    named = _named(diagnoser, text, WALK)
    assert GREEDY in named and WALK not in named, named
    # '😂' is a piece, but no piece starts at a UTF-16 index inside '😂😂': the walk writes bytes.
    text = " ! 😂😂"
    assert diagnoser.encode(WALK, text) != diagnoser.encode(GREEDY, text)
    assert _named(diagnoser, text, WALK) == {WALK}


def test_a_walk_remembered_from_earlier_cases_gives_way_to_the_greedy_match(zoo):
    """After many cases only the walk reproduces, the search tries the sets it remembers first: where
    the greedy match gives the same ids, it is still the one named."""
    diagnoser = Diagnoser(RefTokenizer(load_vocab(zoo("lenml-llama2").files["tokenizer_json"])))
    for n in range(40):
        assert _named(diagnoser, f" {n}! 😂😂", WALK) == {WALK}
    for text in (" ! 🦙", " !"):
        named = _named(diagnoser, text, WALK)
        assert GREEDY in named and WALK not in named, (text, named)
