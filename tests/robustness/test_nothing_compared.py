"""Nothing compared is exit 2, for every corpus kind (issue: hostile input, round 2): an empty JSON
lines file, a Parquet file of no rows and one whose text column is all null each gave "✅ no
unexplained mismatch" on 0 case runs, exit 0. The reports are still written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", ["empty.jsonl", "empty.parquet", "nulls.parquet"])
def test_a_corpus_with_no_text_is_nothing_compared(tmp_path, zoo, kind):
    zoo("llama-spm")
    corpus = tmp_path / kind
    if kind == "empty.jsonl":
        corpus.write_text("", "utf-8")
    else:
        pq.write_table(pa.table({"text": pa.array([] if kind == "empty.parquet" else [None, None], pa.string())}),
                       corpus)
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", str(corpus), "-b", "ref",
                           "-o", str(tmp_path / "out"), "-q"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, (done.stdout, done.stderr)
    error = [line for line in done.stderr.splitlines() if line.startswith("tokparity: error:")]
    assert len(error) == 1 and "nothing was compared: no case was judged" in error[0] and kind in error[0]
    assert "✅" not in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))
    assert summary["runs"] and all(r["cases"] == 0 for r in summary["runs"])


def test_the_pytest_plugin_passes_nothing_compared(zoo):
    """``assert_tokenizer_parity`` passed on no text, on an empty corpus and on an engine that skips
    every case (issue: hostile input, round 3); each fails now, saying why. Its twin passes."""
    from tokparity.backends.base import NotCovered
    from tokparity.backends.ref import RefBackend
    from tokparity.pytest_plugin import assert_tokenizer_parity

    ref = RefBackend(zoo("llama-spm"))

    def right(text, add_special, parse_special):
        return ref.encode(text, add_special, parse_special)

    def skips(text, add_special, parse_special):
        raise NotCovered("not this text")

    with pytest.raises(AssertionError, match="compared on no case: no text was given"):
        assert_tokenizer_parity(right, model="llama-spm", texts=[])
    with pytest.raises(AssertionError, match=r"compared on none of the 3 cases of the given texts \(llama-spm\): "
                                             "3 skipped"):
        assert_tokenizer_parity(skips, model="llama-spm", texts=["a", "b", "c"])
    assert assert_tokenizer_parity(right, model="llama-spm", texts=["a", "b", "c"]) == 3


def test_the_pytest_plugin_fails_on_an_empty_corpus(tmp_path, zoo):
    from tokparity.backends.ref import RefBackend
    from tokparity.pytest_plugin import assert_tokenizer_parity

    ref = RefBackend(zoo("llama-spm"))
    corpus = tmp_path / "empty.jsonl"
    corpus.write_text("", "utf-8")
    with pytest.raises(AssertionError, match="compared on no case: no text was given"):
        assert_tokenizer_parity(lambda t, a, p: ref.encode(t, a, p), model="llama-spm", corpus=str(corpus))
