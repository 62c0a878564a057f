"""A real package's decode that writes an unknown id as its text: simple-sentencepiece 0.14 (PyPI,
C++). Its processor joins each id's piece, ``<unk>`` too, where SentencePiece writes the model's
``unk_surface`` `` ⁇ ``. The ninth survey (2026-12-02) saw it named ``decode.runs-decoded-alone``;
it is ``decode.unknown-as-its-text`` now, proven over the run: every case without an unknown id
agrees. The package reads only a ``.vocab`` whose pieces hold no whitespace: botchan's ``\\r`` piece
and kyoto's tab piece stop it, so the model is a trained one without byte fallback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ssentencepiece", reason="simple-sentencepiece is not installed: pip install -e '.[test]'")

ENGINE = Path(__file__).parents[1] / "engines" / "thirdparty" / "ssp_engine.py"


def test_a_decode_that_writes_unk_as_its_text_is_named(zoo, tmp_path):
    zoo("spm-unigram-split-digits")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", "spm-unigram-split-digits", "-c", "multilingual",
                           "--ops", "decode", "-b", f"ssp=cmd:{sys.executable} {ENGINE} {{spm_model}}",
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    run = next(r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"] if r["backend"] == "ssp")
    verdict = run["root_cause"]
    assert verdict["variants"] == ["decode.unknown-as-its-text"] and verdict["proven"], verdict
    assert verdict["explains"] == verdict["mismatches"] > 0 and verdict["keeps"] == verdict["agreements"] > 0, verdict


def test_an_encoder_that_segments_bpe_as_unigram_is_named(zoo, tmp_path):
    """Its encoder runs one Viterbi over the pieces' scores whatever the model: on a BPE model it
    gives other pieces (``model.best-score``). Asked ids, it also skips the NFKC it applies when
    asked pieces (``ssentencepiece.py``: ``normalizer.none``). The ninth survey saw ``model.other``."""
    zoo("spm-bpe-nmt-nfkc")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", "spm-bpe-nmt-nfkc", "-c", "multilingual",
                           "--ops", "encode", "-b", f"ssp=cmd:{sys.executable} {ENGINE} {{spm_model}}",
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    run = next(r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"] if r["backend"] == "ssp")
    verdict = run["root_cause"]
    assert set(verdict["variants"]) == {"normalizer.none", "model.best-score"}, verdict
    assert verdict["explains"] >= 0.8 * verdict["mismatches"] and verdict["keeps"] == verdict["agreements"] > 0, verdict
