"""The scale benchmark's corpus (benchmarks/scale_corpus.py): deterministic from its seed, web-text
sized documents, cached by seed and size, and read by ``compare`` as a Parquet corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale_corpus  # noqa: E402


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def test_same_seed_same_documents_other_seed_others(tmp_path):
    a = scale_corpus.write_corpus(tmp_path / "a.parquet", seed=3, size_bytes=300_000)
    b = scale_corpus.write_corpus(tmp_path / "b.parquet", seed=3, size_bytes=300_000)
    c = scale_corpus.write_corpus(tmp_path / "c.parquet", seed=4, size_bytes=300_000)
    assert rows(tmp_path / "a.parquet") == rows(tmp_path / "b.parquet")
    assert a["documents"] == b["documents"] and a["text_bytes"] == b["text_bytes"] >= 300_000
    assert [r["text"] for r in rows(tmp_path / "c.parquet")][:5] != [r["text"] for r in rows(tmp_path / "a.parquet")][:5]
    assert c["text_bytes"] >= 300_000


def test_documents_are_web_text_sized_and_mix_the_sources(tmp_path):
    info = scale_corpus.write_corpus(tmp_path / "s.parquet", seed=0, size_bytes=1_000_000)
    table = rows(tmp_path / "s.parquet")
    sizes = sorted(len(r["text"].encode("utf-8")) for r in table)
    assert len(table) == info["documents"] and sum(sizes) == info["text_bytes"]
    assert sizes[0] >= scale_corpus.DOC_BYTES[0]  # a document grows to at least its drawn length
    assert scale_corpus.DOC_BYTES[0] < sizes[len(sizes) // 2] < scale_corpus.DOC_BYTES[1]
    assert table[0]["id"] == "doc-000000000" and len({r["id"] for r in table}) == len(table)
    text = "".join(r["text"] for r in table)
    assert "\n\n" in text and any(0x1F300 <= ord(ch) <= 0x1FAFF for ch in text)  # paragraphs; emoji
    assert set(info["sources"]) == set(scale_corpus.WEIGHTS)  # every source found and used


def test_cached_by_seed_and_size_and_compare_reads_it(tmp_path):
    first, info = scale_corpus.cached_corpus(tmp_path, seed=0, size_mb=1)
    mtime = first.stat().st_mtime_ns
    again, info_again = scale_corpus.cached_corpus(tmp_path, seed=0, size_mb=1)
    assert again == first and first.stat().st_mtime_ns == mtime  # not written again
    assert info["cached"] is False and info_again["cached"] is True
    assert info_again["documents"] == info["documents"]
    assert not list(tmp_path.glob("*.partial"))

    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", str(first),
                           "--text-column", "text", "--id-column", "id", "-b", "sentencepiece", "-b", "llama.cpp",
                           "--sample", "40", "-o", str(out), "-q"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert max(r["cases"] for r in summary["runs"]) == 40
    record = json.loads((out / "cases.jsonl").read_text("utf-8").splitlines()[1])
    assert record["case_id"].startswith("doc-")
