"""tiktoken files bounded before anything is allocated (issue: hostile input, round 2): a rank file
with one 2 MB token took `inspect` over 60 s (every split of the token was tried for its merges);
a js-tiktoken special id of 10**10 and a tekken default_num_special_tokens of 3e8 grew to 5.9 GB
and ended in a MemoryError traceback. Each is now one line naming the file, exit 2, at once."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NORMAL = [bytes([b]) for b in range(ord("a"), ord("z") + 1)]


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def rank_file(path: Path) -> Path:
    lines = [f"{_b64(t)} {r}" for r, t in enumerate(NORMAL)] + [f"{_b64(b'ab' * 1_000_000)} {len(NORMAL)}"]
    path.write_text("\n".join(lines) + "\n", "ascii")
    return path


def js_encoder(path: Path) -> Path:
    ranks = "! 0 " + " ".join(_b64(t) for t in NORMAL)
    path.write_text(json.dumps({"pat_str": r"\S+|\s+", "special_tokens": {"<|endoftext|>": 10**10},
                                "bpe_ranks": ranks}), "utf-8")
    return path


def tekken(path: Path) -> Path:
    path.write_text(json.dumps({"config": {"pattern": r"\S+|\s+", "default_num_special_tokens": 300_000_000,
                                           "default_vocab_size": 300_000_026},
                                "vocab": [{"rank": r, "token_bytes": _b64(t)} for r, t in enumerate(NORMAL)]}),
                    "utf-8")
    return path


@pytest.mark.parametrize("make,name,words", [
    (rank_file, "long.tiktoken", ("the token of rank 26 is 2,000,000 bytes long",)),
    (js_encoder, "encoder.json", ("special_tokens has the id 10000000000",)),
    (tekken, "tekken.json", ("default_num_special_tokens is 300000000",)),
])
def test_a_hostile_tiktoken_file_is_one_line_at_once(tmp_path, make, name, words):
    path = make(tmp_path / name)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tokparity", "inspect", str(path)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert time.perf_counter() - started < 60  # (over 60 s, or a MemoryError after 5.9 GB, before)
    assert done.returncode == 2, (done.stdout, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: ") and str(path) in lines[0], lines
    assert all(w in lines[0] for w in words), lines[0]
