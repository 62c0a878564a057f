"""A real package's decode that panics on ids whose bytes are not UTF-8: pyrwkv-tokenizer 0.9.1
(PyPI, Rust). Its binding unwraps ``str::from_utf8`` (``bindings/python/src/lib.rs``). Asked every
id of rwkv-world (``-c ids``), it fails on the byte tokens. Their pieces are bytes, not text, and
tokparity itself died writing such rows to its journal (a UnicodeEncodeError: the ninth survey,
2026-12-02). The run now writes its reports and names the panic, proven."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyrwkv_tokenizer", reason="pyrwkv-tokenizer is not installed: pip install -e '.[test]'")

ENGINE = Path(__file__).parents[1] / "engines" / "thirdparty" / "pyrwkv_engine.py"


def test_a_decode_that_panics_on_byte_tokens_is_named(zoo, tmp_path):
    zoo("rwkv-world")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", "rwkv-world", "-c", "ids", "--ops", "decode",
                           "-b", f"pyrwkv=cmd:{sys.executable} {ENGINE} {{rwkv_vocab}}", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    run = next(r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"] if r["backend"] == "pyrwkv")
    verdict = run["root_cause"]
    assert verdict["variants"] == ["decode.fails-on-invalid-bytes"] and verdict["proven"], verdict
    assert verdict["keeps"] == verdict["agreements"] > 0 and run["classes"]["crash"] >= 9, run
    # (a byte token's piece is written as SentencePiece writes a byte: the journal is UTF-8)
    assert '"<0x' in (out / "cases.jsonl").read_text("utf-8")
