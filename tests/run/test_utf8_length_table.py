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
