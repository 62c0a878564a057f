"""A real package's decode with two bugs at once: curated-tokenizers 2.0.1 (PyPI, Cython and C++).
Its ``ByteBPEProcessor.decode_from_ids`` cleans up no spaces where llama.cpp's GPT-2 decode does,
and decodes its bytes as strict UTF-8 (``_bbpe.pyx``), so ids that end inside a character raise.
Neither bug alone explains the run. At first sight the failures had no cause (the tenth survey).
The verdict now adds the failing way of decoding to the other bug, so both are named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("curated_tokenizers", reason="curated-tokenizers is not installed: pip install -e '.[test]'")

ENGINE = Path(__file__).parents[1] / "engines" / "thirdparty" / "survey10" / "curated_bbpe.py"


def _verdict(tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", "gpt-2", "-c", "edge", "-c", "ids",
                           "--ops", "decode", *extra, "-b", f"curated=cmd:{sys.executable} {ENGINE} {{gguf}}",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    run = next(r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"] if r["backend"] == "curated")
    return run


def test_a_decode_without_clean_up_that_fails_on_a_cut_character_is_named_for_both(zoo, tmp_path):
    zoo("gpt-2")
    run = _verdict(tmp_path)
    verdict = run["root_cause"]
    assert verdict["variants"] == ["decode.cleanup", "decode.fails-on-invalid-bytes"] and verdict["proven"], verdict
    assert verdict["explains"] == verdict["mismatches"] and verdict["keeps"] == verdict["agreements"] > 0, verdict
    assert run["classes"]["crash"] >= 8 and run["classes"]["decode-cleanup"] >= 8, run


def test_with_the_clean_up_off_only_the_failure_is_left(zoo, tmp_path):
    # The twin of the first bug: llama.cpp cannot decode without clean-up, so the reference judges.
    zoo("gpt-2")
    verdict = _verdict(tmp_path, "--clean-up-spaces", "off", "-b", "ref")["root_cause"]
    assert verdict["variants"] == ["decode.fails-on-invalid-bytes"] and verdict["proven"], verdict
