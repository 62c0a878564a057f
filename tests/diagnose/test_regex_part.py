"""``pretokenizer.regex-part``: the model's split regex copied with one part missing. The engine
it is judged on was written by a helper trying the README as a newcomer, with a bug of its own
choosing, before this cause existed (tests/engines/blind/regex_part_port.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.diagnose.variants import regex_parts
from tokparity.reference.pretokenize import REGEXES

ENGINE = Path(__file__).parents[1] / "engines" / "blind" / "regex_part_port.py"
LLAMA3 = REGEXES["llama3"][0]


def test_a_regex_is_read_as_alternatives_of_parts():
    alts = regex_parts.alternatives(LLAMA3)
    assert len(alts) == 7 and alts[0].startswith("(?") and alts[-1] == r"\s+"
    assert regex_parts.parts(alts[3]) == [" ?", r"[^\s\p{L}\p{N}]+", r"[\r\n]*"]
    assert regex_parts.parts(alts[5]) == [r"\s+", r"(?!\S)"]
    assert regex_parts.parts(r"\p{N}{1,3}") == [r"\p{N}{1,3}"]


@pytest.mark.parametrize("name", sorted(REGEXES))
def test_every_known_regex_is_read_back_whole(name):
    for source in REGEXES[name]:
        assert "|".join(regex_parts.alternatives(source)) == source
        assert all("".join(regex_parts.parts(alt)) == alt for alt in regex_parts.alternatives(source))


def test_an_edit_that_would_cut_between_every_two_characters_is_no_variant():
    r"""A part left out may leave an alternative that matches nothing at all: llama.cpp's default
    list less one of its `[0-9]`, GPT-2's less `\p{L}+`. Such a split cuts every character apart."""
    assert regex_parts.without("[0-9][0-9][0-9]|a", "[0-9]") == "[0-9][0-9][0-9]|a"  # (a part held twice: kept)
    assert regex_parts._matches_nothing(" ?\\p{L}+", "\\p{L}+") is False
    assert regex_parts._matches_nothing(" ?\\p{L}+|a", " ?|a")
    keys = {v.key for v in regex_parts.variants()}
    assert "pretokenizer.regex-part:-(?!\\S)" not in keys  # (pretokenizer.regex-engine:no-lookaround's)


def test_a_part_is_left_out_only_beside_another():
    edited = regex_parts.without(LLAMA3, r"\s+")
    assert edited.split("|")[-2:] == [r"(?!\S)", r"\s+"]  # (\s+ alone is an alternative: kept)
    assert regex_parts.without(LLAMA3, r"[\r\n]*") == LLAMA3.replace(r" ?[^\s\p{L}\p{N}]+[\r\n]*", r" ?[^\s\p{L}\p{N}]+")


def _run(tmp_path: Path, engine: str) -> dict:
    out = tmp_path / engine
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-bpe", "-c", "edge", "-c", "seams",
                           "-b", f"mine=py:{ENGINE}:{engine}", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    return next(r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"] if r["backend"] == "mine")


@pytest.mark.parametrize("engine,variants", [
    ("Engine", ["pretokenizer.regex-part:-[\\r\\n]*", "unicode.tables"]),
    # (the twin: Python's regex module reads Unicode 17's tables, llama.cpp older ones)
    ("FixedEngine", ["unicode.tables"]),
])
def test_a_port_whose_regex_lacks_a_part_is_named_for_it(zoo, tmp_path, engine, variants):
    zoo("llama-bpe")
    verdict = _run(tmp_path, engine)["root_cause"]
    assert verdict["variants"] == variants and verdict["proven"], verdict
    assert verdict["explains"] == verdict["mismatches"] and verdict["keeps"] == verdict["agreements"], verdict
