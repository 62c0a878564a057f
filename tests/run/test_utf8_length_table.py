"""``decode.four-bytes-read-as-three``: a UTF-8 length table with no 4-byte sequences, as code
written for the BMP alone has. The engine was written by a helper trying the README as a newcomer,
with a bug of its own choosing: a byte-buffer streamer whose ``utf8_len`` gives 3 for every lead
byte from E0 up (tests/engines/blind/utf8_len_stream.py). At first sight it was named
``stream.offset-into-lossy-text``, 5 of 19, not proven."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.diagnose.wrong_bytes import _lengths_trusted

ENGINE = Path(__file__).parents[1] / "engines" / "blind" / "utf8_len_stream.py"


def test_a_character_past_the_bmp_becomes_two_replacement_characters():
    data = "a😀b".encode()
    assert _lengths_trusted(data, four=3) == "a\ufffd\ufffdb"
    assert _lengths_trusted(data) == "a😀b"
    # (a stream sends each sequence that ends after its prompt's bytes: the emoji's last byte alone
    # after a prompt of 4 bytes; its first three bytes too after one of 3, which they end after)
    assert _lengths_trusted(data, four=3, sent_after=4) == "\ufffdb"
    assert _lengths_trusted(data, four=3, sent_after=3) == "\ufffd\ufffdb"


def _run(tmp_path: Path, engine: str) -> tuple[int, dict]:
    out = tmp_path / engine
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-bpe", "-c", "edge", "-c", "ids",
                           "--ops", "stream", "-b", f"mine=py:{ENGINE}:{engine}", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    runs = json.loads((out / "summary.json").read_text("utf-8"))["runs"]
    return proc.returncode, next(r for r in runs if r["backend"] == "mine")


@pytest.mark.parametrize("engine", ["Engine", "FixedEngine"])
def test_a_streamer_without_four_byte_sequences_is_named(zoo, tmp_path, engine):
    zoo("llama-bpe")
    code, run = _run(tmp_path, engine)
    if engine == "FixedEngine":  # (its only differences are llama.cpp's own, reviewed)
        assert code == 0 and (run.get("root_cause") or {}).get("cause") != "decode.four-bytes-read-as-three", run
        return
    verdict = run["root_cause"]
    assert code == 1 and verdict["cause"] == "decode.four-bytes-read-as-three" and verdict["proven"], verdict
    assert verdict["explains"] == verdict["mismatches"] and verdict["keeps"] == verdict["agreements"], verdict


def test_a_sequence_that_is_not_a_character_keeps_its_valid_bytes_in_the_second_form():
    """Python's ``bytes.decode`` with replacement keeps the valid bytes of a sequence cut short: the
    engine's 3-byte chunk E0 B8 20 is U+FFFD and a space, not one U+FFFD."""
    data = b"\xe0\xb8 x"
    assert _lengths_trusted(data, four=3) == "\ufffdx"
    assert _lengths_trusted(data, four=3, keep_valid=True) == "\ufffd x"


@pytest.mark.parametrize("engine, cause", [("Engine", "decode.four-bytes-read-as-three"),
                                           ("FixedEngine", "decode.lead-byte-takes-its-length")])
def test_fuzzing_the_stream_names_the_one_bug_as_compare_does(zoo, engine, cause):
    """fuzz --ops stream on random id sequences, as many on any machine: the run's verdict is the
    bug, proven on the sequences the engine agreed on, and the finding with the most sequences is
    it. Before, each sequence kept its own cause: 9 findings, 6 names, no verdict.

    The twin agrees on every text, but random bytes show its other bug: a broken lead byte still
    takes as many bytes as it announces before any is sent (it decodes them with replacement)."""
    from tokparity.commands.arguments import WEEK
    from tokparity.fuzz.ids import run_id_fuzz
    from tokparity.run.known import load_known
    from tokparity.run.options import CompareOptions, Services

    zoo("llama-bpe")
    options = CompareOptions(ops=("stream",), services=Services(known=load_known()))
    results, findings, cases = run_id_fuzz("llama-bpe", [f"mine=py:{ENGINE}:{engine}"], options, WEEK, 0, cases=1500)
    assert cases == 1500
    verdict = next(r for r in results.runs if r.backend == "mine").root_cause
    assert verdict is not None and verdict.cause == cause and verdict.proven, verdict
    assert verdict.keeps == verdict.agreements and verdict.explains >= 0.9 * verdict.mismatches, verdict
    top = max((f for f in findings if f.backend == "mine"), key=lambda f: f.count)
    assert top.key == cause and len(top.case.ids) < len(top.original.ids), top
