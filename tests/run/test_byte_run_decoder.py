"""A decoder that steps past the token after each run of byte tokens (tests/engines/byte_run_decoder.py,
the loop of @lenml/llama2-tokenizer 1.1.4's ``convert_tokens_to_string``) is named
``decode.token-after-bytes-dropped``; its twin agrees. The package itself, with its other bug (the
first token's space kept), is named ``decode.token-after-bytes-dropped+decode.prefix-kept``
(docs/findings.md, "Eighth survey")."""

from __future__ import annotations

from pathlib import Path

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = Path(__file__).parents[1] / "engines" / "byte_run_decoder.py"


def test_the_token_after_a_run_of_byte_tokens_left_out_is_named(zoo):
    zoo("lenml-llama2")
    results = run_compare(["lenml-llama2"], ["edge", "ids"], [f"bug=py:{ENGINE}:Engine", f"twin=py:{ENGINE}:Twin"],
                          CompareOptions(ops=("decode",)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["twin"].cases > 800
    rows = [m for m in results.mismatches if m.backend == "bug"]
    assert rows and {m.cause for m in rows} == {"decode.token-after-bytes-dropped"}, {m.cause for m in rows}
    verdict = runs["bug"].root_cause
    assert verdict is not None and verdict.cause == "decode.token-after-bytes-dropped" and verdict.proven, verdict


def test_the_pair_of_bugs_is_the_verdict(zoo):
    """The run's verdict named one cause, ``decode.prefix-kept``, not proven: the rows that drop a
    token are the pair's. It names the pair now, proven."""
    zoo("lenml-llama2")
    results = run_compare(["lenml-llama2"], ["edge", "ids"], [f"package=py:{ENGINE}:Package"],
                          CompareOptions(ops=("decode",)))
    (run,) = [r for r in results.runs if r.backend == "package"]
    pair = "decode.token-after-bytes-dropped+decode.prefix-kept"
    rows = [m for m in results.mismatches if m.backend == "package"]
    assert sum(m.cause == pair for m in rows) > 50, {m.cause for m in rows}
    verdict = run.root_cause
    assert verdict is not None and verdict.cause == pair and verdict.proven, verdict
