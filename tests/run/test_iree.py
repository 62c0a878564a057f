"""A real package with two bugs each way: iree-tokenizer 0.3.0 (IREE's C tokenizer, PyPI). Its
ByteLevel decoder decodes each id alone, so a character split across ids is U+FFFD. Its Python
binding sizes the output buffer at 8 bytes an id plus 128 and never grows it: a longer text fails
with ``RESOURCE_EXHAUSTED; decode output buffer full`` (``tokenizer.c``). Whether an engine fails is
apart from the text it gives, so the run's verdict holds both: the failure joins it where it fails
on every failure of the engine and on no other case. Its encode cuts the ids short and
backtracks where rank BPE merges."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

pytest.importorskip("iree.tokenizer", reason="iree-tokenizer is not installed: pip install -e '.[test]'")

ENGINE = Path(__file__).parents[1] / "engines" / "thirdparty" / "survey8" / "iree_tokenizer_engine.py"


@pytest.mark.parametrize("model", ["llama-bpe", "qwen3"])
def test_each_id_alone_and_the_buffer_are_the_verdict(zoo, model):
    zoo(model)
    results = run_compare([model], ["edge", "ids"], [f"iree=cmd:{sys.executable} {ENGINE} {{tokenizer_json}}"],
                          CompareOptions(ops=("decode",)))
    run = next(r for r in results.runs if r.backend == "iree")
    rows = Counter((m.cls, m.cause) for m in results.mismatches if m.backend == "iree")
    assert rows[("crash", "decode.fails-past-buffer")] >= 1 and not rows[("crash", "")], rows
    assert rows[("decode-roundtrip", "decode.ids-alone")] >= 80, rows
    root = run.root_cause
    assert root is not None and root.variants == ("decode.ids-alone", "decode.fails-past-buffer"), root
    assert root.proven and root.keeps == root.agreements, root


def test_its_ids_cut_at_half_the_texts_bytes_and_its_backtracking_are_named(zoo):
    """Its encode keeps half the text's bytes plus 16 ids and drops the rest (measured on random
    texts: the cut is exactly that, whatever the script). Its other bug is its encoder: IREE's
    backtracking, not rank BPE (tokparity/reference/iree_backtrack.py is a port of it). The
    verdict is both, proven: every row named, every agreement kept."""
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["multilingual"],
                          [f"iree=cmd:{sys.executable} {ENGINE} {{tokenizer_json}}"], CompareOptions())
    run = next(r for r in results.runs if r.backend == "iree")
    rows = [m for m in results.mismatches if m.backend == "iree"]
    cut = [m for m in rows if len(m.backend_ids) < len(m.oracle_ids) and m.oracle_ids[:len(m.backend_ids)] == m.backend_ids]
    assert len(cut) >= 30, len(cut)
    assert {(m.cls, m.cause) for m in cut} == {("ids-cut-short", "ids.truncated")}, Counter((m.cls, m.cause) for m in cut)
    others = Counter(m.cause for m in rows if m not in cut)
    assert set(others) == {"model.backtracking"} and others["model.backtracking"] >= 15, others
    root = run.root_cause
    assert root is not None and set(root.variants) == {"ids.truncated:bytes/2+16", "model.backtracking:iree"}, root
    assert root.proven and root.explains == root.mismatches == len(rows) and root.keeps == root.agreements, root
