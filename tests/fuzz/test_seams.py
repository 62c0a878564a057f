r"""The ``unicode-seams`` generator (tokparity.fuzz.seams) and the engine it is tested with
(tests/engines/reference_engine.py: tokparity's reference on a GGUF with bugs planted by flags).

The case the generator exists for: JavaScript ports of GPT-2 read U+0085 (NEL) as a non-space
(ECMAScript's ``\s`` lacks it), so ``' \x85a'`` is ``[1587, 227, 64]`` to them and
``[220, 126, 227, 64]`` to llama.cpp; 450,000 random fuzz cases never found it. Here it is the
generator's first case, and a fuzz run finds it in its first seconds."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.fuzz.generators import GENERATORS, generate, generate_all
from tokparity.fuzz.loop import PER_CASE_TAGS
from tokparity.fuzz.seams import CONTEXTS, coverage_line, seams, seams_covered, unicode_seams

ROOT = Path(__file__).resolve().parents[2]
ENGINE = f"cmd:{{python}} {ROOT / 'tests' / 'engines' / 'reference_engine.py'} {{gguf}}"
ECMA = f"ecma={ENGINE} --space-class ecmascript"
TWIN = f"twin={ENGINE}"
NEL = " \x85a"
LLAMA_CPP_NEL, ECMASCRIPT_NEL = [220, 126, 227, 64], [1587, 227, 64]

# Every code point the engines' \s lists disagree on: ECMAScript's, RE2's, Python re's, hand-written ones.
SPACES = [0x85, 0xFEFF, 0x180E, 0x0B, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
          0x1C, 0x1D, 0x1E, 0x1F, 0x200B, 0x2060]


def tokparity(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def cases():
    return list(unicode_seams(None))


# -- the generator ------------------------------------------------------------------------------


def test_seams_is_first_and_bounded(cases):
    assert list(GENERATORS)[0] == "unicode-seams"
    assert next(generate_all(None)).corpus == "gen:unicode-seams"
    assert len(cases) == sum(s.texts for s in seams())
    assert 3000 <= len(cases) <= 6000, len(cases)  # cheap enough to run to its end first in every fuzz run
    assert len({c.text for c in cases}) == len(cases) == len({c.id for c in cases})
    # the same texts, in the same order, for every seed and vocabulary
    assert [c.text for c in generate("unicode-seams", None, seed=5)] == [c.text for c in cases]


def test_every_space_in_every_context_first(cases):
    assert cases[0].text == NEL
    assert cases[0].tags == {"kind": "seam", "generator": "unicode-seams", "seam": "\\s:ecmascript",
                             "context": "space-before-letter", "codepoint": "U+0085"}
    texts = {c.text: i for i, c in enumerate(cases)}
    expected = [template.format(chr(cp)) for cp in SPACES for _, template in CONTEXTS]
    assert len(CONTEXTS) == 13 and len(expected) == 28 * 13
    missing = [t for t in expected if t not in texts]
    assert not missing, missing[:5]
    # all of them before anything else: a one-second run has tried every space in every context
    assert max(texts[t] for t in expected) == len(expected) - 1
    assert {c.tags["seam"] for c in cases[:len(expected)]} == {"\\s:ecmascript", "\\s:re2", "\\s:python-re",
                                                               "\\s:hand-written"}


def test_seams_in_the_order_most_often_ported_wrong(cases):
    names = [s.name for s in seams()]
    first = {prefix: next(i for i, n in enumerate(names) if n.startswith(prefix))
             for prefix in ("\\s:", "\\p{N}:", "\\w:", "\\p{L}:", "\\p{M}:", "lower:", "\\p{N}:unicode-versions")}
    assert list(first.values()) == sorted(first.values()), names
    # the real letter-number bug's Ⅻ, the case seam's İ, ſ and Σ, the Unicode 16 Garay digits' block
    texts = {c.text for c in cases}
    assert {"a\u216bb", "a'\u017f", "a\u03a3 b", "\u0130"} <= texts
    garay = [c for c in cases if c.tags["seam"] == "\\p{N}:unicode-versions"
             and 0x10D40 <= int(c.tags["codepoint"][2:], 16) <= 0x10D49]
    assert garay, "the Garay digits (Unicode 16, \\p{N} to tokenizers, unassigned to llama.cpp) are not tried"


def test_tags_stay_out_of_the_tally_table(cases):
    """One case per code point: a code point must not be a tally key (the report's per-tag table)."""
    keys = {k for c in cases for k in c.rate_keys if not k.startswith(PER_CASE_TAGS)}
    assert {k.split("=", 1)[0] for k in keys} == {"kind", "generator", "seam", "context", "corpus"}
    assert len(keys) == 3 + len(seams()) + len(CONTEXTS)


def test_seams_covered_says_what_a_run_tried():
    first, second = seams()[:2]
    covered = seams_covered({first.name: first.texts, second.name: 5})
    assert [c.seam for c in covered] == [s.name for s in seams()]
    assert covered[0].to_json() == {"seam": "\\s:ecmascript", "about": first.about, "cases": 39, "of": 39,
                                    "code_points": 3, "of_code_points": 3, "complete": True}
    assert (covered[1].cases, covered[1].complete) == (5, False)
    assert all(c.cases == 0 for c in covered[2:])
    w = next(c for c in covered if c.seam == "\\w:ascii")
    assert w.of_code_points > 100_000 > w.code_points  # representatives of a huge seam
    line = coverage_line({first.name: first.texts, second.name: 5})
    assert line.startswith("seams covered: \\s:ecmascript; partly: \\s:re2 (5/247); not reached: \\s:python-re")


# -- the engine ---------------------------------------------------------------------------------


def test_engine_plants_its_bugs_and_its_twin_agrees(tmp_path, zoo, cases):
    """ECMAScript's \\s differs from llama.cpp on U+0085 with the ids of the JavaScript ports;
    the bug-free twin agrees with llama.cpp on edge, multilingual and every space seam."""
    zoo("gpt-2")
    spaces = tmp_path / "spaces.jsonl"
    spaces.write_text("".join(json.dumps({"id": c.id, "text": c.text, "tags": {"seam": c.tags["seam"]}}) + "\n"
                              for c in cases if c.tags["seam"].startswith("\\s:")), "utf-8")
    out = tmp_path / "out"
    run = tokparity("compare", "gpt-2", "-c", "edge", "-c", "multilingual", "-c", str(spaces), "-b", ECMA,
                    "-b", TWIN, "--oracle", "llama.cpp", "-o", str(out), "-q")
    assert run.returncode == 1, run.stderr
    summary = {r["backend"]: r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"]}
    assert summary["twin"]["mismatches"] == 0 and summary["twin"]["cases"] > 1500
    rows = {r["text"]: r for r in csv.DictReader((out / "mismatches.csv").open(encoding="utf-8"))}
    assert {r["backend"] for r in rows.values()} == {"ecma"}
    nel = rows[NEL]
    assert json.loads(nel["oracle_ids"]) == LLAMA_CPP_NEL and json.loads(nel["backend_ids"]) == ECMASCRIPT_NEL
    assert nel["cause"] == "pretokenizer.regex-engine"
    assert all("\x85" in t or "\ufeff" in t for t in rows), sorted(rows)


def test_engine_digits_and_letter_numbers(zoo):
    sys.path.insert(0, str(ROOT / "tests" / "engines"))
    try:
        from reference_engine import Engine
    finally:
        sys.path.remove(str(ROOT / "tests" / "engines"))
    gguf = str(zoo("gpt-2").path("gguf"))
    text = "1\u216b x\u2163y 20000"
    assert Engine(gguf, {}).tokenizer.pipeline.pretokenizer.split(text) == ["1Ⅻ", " x", "Ⅳ", "y", " 20000"]
    assert Engine(gguf, {"letter_numbers_as_letters": True}).tokenizer.pipeline.pretokenizer.split(text) == \
        ["1", "Ⅻ", " xⅣy", " 20000"]
    assert Engine(gguf, {"digits": 3}).tokenizer.pipeline.pretokenizer.split(text) == \
        ["1Ⅻ", " x", "Ⅳ", "y", " 200", "00"]


# -- fuzz, end to end -----------------------------------------------------------------------------


def fuzz(engine: str, out: Path) -> subprocess.CompletedProcess:
    # (a case budget larger than the generator: the run ends when the seams do, however loaded the machine)
    return tokparity("fuzz", "gpt-2", "-b", engine, "--cases", "100000", "-g", "unicode-seams", "--no-hypothesis",
                     "-o", str(out), "-q")


def test_fuzz_finds_the_ecmascript_space_in_seconds(tmp_path, zoo):
    zoo("gpt-2")
    run = fuzz(ECMA, tmp_path)
    assert run.returncode == 1, run.stderr
    records = [json.loads(line) for line in (tmp_path / "fuzz-findings.jsonl").read_text("utf-8").split("\n") if line]
    nel = [r for r in records if r["cause"] == "pretokenizer.regex-engine" and "\x85" in r["text"]]
    assert nel, records
    fuzz_summary = json.loads((tmp_path / "summary.json").read_text("utf-8"))["options"]["fuzz"]
    found = next(f for f in fuzz_summary["findings"] if f["text"] == nel[0]["text"])
    journal = [json.loads(line) for line in (tmp_path / "cases.jsonl").read_text("utf-8").split("\n")[1:] if line]
    (noted,) = [d["note"]["finding"] for d in journal if "finding" in d.get("note", {}) and d["note"]["finding"]["id"]
                == found["id"]]
    assert noted["n"] < 300  # among the first cases: in seconds on any machine
    assert fuzz_summary["by_source"] == {"gen:unicode-seams": sum(s.texts for s in seams())}  # ran to its end


def test_fuzz_finds_nothing_in_the_twin(tmp_path, zoo):
    zoo("gpt-2")
    run = fuzz(TWIN, tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "fuzz-findings.jsonl").read_text("utf-8") == ""
    fuzz_summary = json.loads((tmp_path / "summary.json").read_text("utf-8"))["options"]["fuzz"]
    assert fuzz_summary["findings"] == [] and fuzz_summary["cases"] == sum(s.texts for s in seams())
