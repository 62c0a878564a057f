"""A real package whose NFC is a table: openvino-tokenizers 2026.4.1 converts a tokenizer.json's NFC
step to SentencePiece's kind of charsmap, matched longest first (``src/normalize_unicode.cpp``;
docs/findings.md, the fifth survey's O1). Marks out of canonical order stay so, and a precomposed
letter is not composed with a mark after it. On Qwen3 that changes two texts of the default
corpora. Until ``normalizer.nfc:charsmap`` they were a stage, ``normalizer.other``.

The engine (tests/engines/thirdparty/openvino_engine.py) converts the model's folder as the
package's readme shows and encodes with openvino-genai's ``Tokenizer``. Its split is PCRE2's, which
reads U+180E as a space: ``pretokenizer.regex-engine`` names those rows."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

pytest.importorskip("openvino_genai", reason="openvino-genai is not installed: pip install -e '.[test]'")
pytest.importorskip("openvino_tokenizers", reason="openvino-tokenizers is not installed: pip install -e '.[test]'")

ENGINE = Path(__file__).parents[1] / "engines" / "thirdparty" / "openvino_engine.py"


def test_nfc_by_table_is_named_and_proven(zoo, tmp_path, monkeypatch):
    zoo("qwen3")
    monkeypatch.setenv("OV_ENGINE_CACHE", str(tmp_path / "converted"))
    results = run_compare(["qwen3"], ["all"], ["hf", f"ov=cmd:{sys.executable} {ENGINE} {{tokenizer_json}}"],
                          CompareOptions())
    (run,) = [r for r in results.runs if r.backend == "ov"]
    rows = {m.case_id: m for m in results.mismatches if m.backend == "ov"}
    normalized = {case: m.cause for case, m in rows.items() if m.cls == "normalization"}
    assert len(normalized) == 2 and set(normalized.values()) == {"normalizer.nfc"}, normalized
    assert len(rows) == 4 and {m.cause for m in rows.values()} == {"normalizer.nfc", "pretokenizer.regex-engine"}
    assert "normalization-0050" in normalized  # 'Phường' written with a mark: ơ and U+0300 are left apart
    root = run.root_cause
    assert root is not None and root.proven and root.keeps == root.agreements
    assert "normalizer.nfc:charsmap" in root.variants and root.explains == run.mismatches, root
