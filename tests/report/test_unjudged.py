"""A backend judged on no case says so, with the reason (issue: the first hour, item 3).

The README's template engine answers ``decode`` with an error, so ``--ops decode`` asks it nothing it
answers. Its cell read a green "0 / 0" and "2 without golden ids", and ``explain`` listed it under
"agree on every case", though nothing of it was judged. The run is nothing compared of mine:
exit 2 (a fourth hostile campaign's find), and its reports say why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "examples" / "engines" / "template_engine.py"


def tokparity(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_backend_that_answers_nothing_is_said_to_be_judged_on_no_case(tmp_path, zoo):
    zoo("llama-bpe")
    corpus = tmp_path / "two.jsonl"
    corpus.write_text('{"id": "a", "text": "Hello world"}\n{"id": "b", "text": "héllo"}\n', "utf-8")
    out = tmp_path / "out"
    done = tokparity("compare", "llama-bpe", "-c", str(corpus), "-b", "ref", "-b",
                     f"mine=cmd:{{python}} {TEMPLATE} {{tokenizer_json}}", "--ops", "decode", "-o", str(out), "-q")
    # (nothing of mine compared is never ✅: exit 2, once the reports that say so are written)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == ["tokparity: error: nothing was compared: mine judged no case (each "
                                                f"skipped, or not applicable); the reports are in {out}"]
    explained = tokparity("explain", str(out)).stdout
    assert "agree on every case: llama-bpe/ref · decode\n" in explained
    assert "judged on no case: llama-bpe/mine · decode (2 not answered)" in explained
    assert "Nothing compared: mine judged no case (each skipped, or not applicable). No verdict." in " ".join(
        explained.split())
    assert "agrees with its oracle" not in explained
    html = (out / "report.html").read_text("utf-8")
    assert "judged on no case" in html and "2 not answered" in html and "without golden ids" not in html


def test_the_header_names_the_most_used_known_divergences_only():
    """A run that met many known divergences listed them all on one header line (803 characters in
    a newcomer's parity run). The header names the most used few; each write-up lists its own."""
    from tokparity.report.build import DIGEST, KNOWN_IN_HEADER, build
    from tokparity.report.plain import lines
    from tokparity.run.results import Results, RunSummary

    used = {f"known-{k}": 10 * k for k in range(1, 9)}
    results = Results("0.1.0", runs=[RunSummary("m", "llama.cpp", "mine", cases=100, mismatches=36, unexplained=0)],
                      known={"used": used})
    header = [line for line in lines(build(results, DIGEST)) if line.startswith("Known divergences")]
    assert header == ["Known divergences (reported, not failing): known-8 80, known-7 70, known-6 60, known-5 50, "
                      f"and {8 - KNOWN_IN_HEADER} more (each write-up lists its own)"]
