"""A stream with two bugs, one of them a switch: the streamer a newcomer writes on tokenizers'
decode (tests/engines/prefix_streamer.py) sends a split character's U+FFFD and skips special
tokens, as that decode does by default. The run's verdict names both bugs, each engine with one
of them gets only its own, and the twin agrees. Before, the verdict named the first bug alone and
left the rows of the second out of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services

ENGINE = Path(__file__).parents[1] / "engines" / "prefix_streamer.py"


@pytest.mark.parametrize("engine,cause", [
    ("Eager", "stream.offset-into-lossy-text+decode.specials-skipped"),
    ("EagerKeepingSpecials", "stream.offset-into-lossy-text"),
    ("SkippingSpecials", "decode.specials-skipped"),
    ("Right", None),
])
def test_a_stream_that_also_skips_special_tokens_is_named_for_both(zoo, engine, cause):
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["edge", "ids"], [f"mine=py:{ENGINE}:{engine}"],
                          CompareOptions(ops=("stream",), services=Services(known=load_known([], builtin=True))))
    run = next(r for r in results.runs if r.backend == "mine")
    verdict = run.root_cause
    if cause is None:
        assert run.unexplained == 0 and verdict is None, verdict
        return
    assert verdict is not None and verdict.cause == cause and verdict.proven, verdict
    assert verdict.explains == verdict.mismatches == run.unexplained > 0
    assert verdict.keeps == verdict.agreements
