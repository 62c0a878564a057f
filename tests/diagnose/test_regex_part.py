"""``pretokenizer.regex-part``: the model's split regex copied with one part missing, or with one
part written as another model's regex writes it. The engines it is judged on were written by
helpers trying the README as newcomers, each with a bug of its own choosing, before the form that
names it existed (tests/engines/blind/regex_part_port.py, newcomer6_port.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.diagnose.variants import regex_parts
from tokparity.reference.pretokenize import REGEXES

ENGINE = Path(__file__).parents[1] / "engines" / "blind" / "regex_part_port.py"
NEWCOMER6 = ENGINE.with_name("newcomer6_port.py")
BLIND20 = ENGINE.with_name("blind20_qwen_port.py")
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


def test_a_part_written_as_another_model_writes_it_is_one_variant():
    """Llama 3's letters with GPT-2's optional space: two alternatives alike but for one part."""
    from tokparity.diagnose.variants.pretokenizer import spelled_out

    letters = "[^\r\n\\p{L}\\p{N}]?"  # (as the regexes are spelt out: a real CR and LF in the class)
    assert (letters, " ?") in regex_parts._other_ways()
    assert " ?\\p{L}+" in regex_parts.alternatives(regex_parts.swapped(spelled_out(LLAMA3), letters, " ?"))
    # (one model's letters and its own digits are not two ways to write one part)
    assert ("\\p{L}+", "\\p{N}+") not in regex_parts._other_ways()


@pytest.mark.parametrize("engine", ["Engine", "FixedEngine"])
def test_a_port_with_gpt_2_s_letters_in_llama_3_s_regex_is_named_for_that_part(zoo, tmp_path, engine):
    """A third newcomer's port: at first sight named ``pretokenizer.starcoder`` (another model's
    whole regex), not proven. Its twin shows only tokenizers' reviewed Unicode tables."""
    zoo("llama-bpe")
    out = tmp_path / engine
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-bpe", "-c", "edge", "-c", "seams",
                           "-c", "multilingual", "-b", f"mine=py:{NEWCOMER6}:{engine}", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    run = next(r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"] if r["backend"] == "mine")
    verdict = run["root_cause"]
    if engine == "FixedEngine":
        assert run["unexplained"] == 0 and proc.returncode == 0, run
        return
    assert verdict["variants"] == [r"pretokenizer.regex-part:[^\r\n\p{L}\p{N}]?= ?"] and verdict["proven"], verdict
    assert verdict["keeps"] == verdict["agreements"] and run["unexplained"] == verdict["explains"], (verdict, run)


@pytest.mark.parametrize("engine", ["Engine", "FixedEngine"])
def test_a_blind_qwen_port_with_any_space_before_letters_is_named_for_that_part(zoo, tmp_path, engine):
    """Written blind after the form above existed, from one paragraph: Qwen's letters with ``\\s?``
    in front. Named by the same mechanism, another way to write the part; the twin agrees."""
    zoo("qwen3")
    out = tmp_path / engine
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", "qwen3", "-c", "edge", "-c", "seams",
                           "-c", "multilingual", "-b", f"mine=py:{BLIND20}:{engine}", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr
    if engine == "FixedEngine":
        assert proc.returncode == 0, proc.stdout[-2000:]
        return
    run = next(r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"] if r["backend"] == "mine")
    verdict = run["root_cause"]
    assert verdict["variants"] == [r"pretokenizer.regex-part:[^\r\n\p{L}\p{N}]?=\s?"] and verdict["proven"], verdict
    assert verdict["explains"] == verdict["mismatches"] == run["mismatches"], (verdict, run)
    assert verdict["keeps"] == verdict["agreements"], verdict
