"""Fuzzing by cause: one planted bug is one finding, two bugs are two, whatever classes their cases
show; generators whose cases only repeat a found cause give way; the journal stays small and a
known divergence does not fail the run.

The engines are real libraries with one setting changed (tests/engines/*.py); the causes are the
catalogue's names (docs/catalogue/causes.md) as the diagnosis reproduces them.
"""

from __future__ import annotations

import json
import sys
from itertools import islice
from pathlib import Path

import pytest

from tokparity.cli import main
from tokparity.commands.arguments import WEEK
from tokparity.corpus import Case
from tokparity.fuzz.findings import FINDINGS_FILE
from tokparity.fuzz.loop import FuzzOptions, run_fuzz
from tokparity.fuzz.steering import AGREED, EXPLAINED, FLOOR, NEW, Steering
from tokparity.run.options import CompareOptions

ENGINES = Path(__file__).resolve().parents[1] / "engines"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "engines"  # the README's demo engines
HF = f"cmd:{sys.executable} {ENGINES / 'tokenizers_engine.py'} {{tokenizer_json}}"
GREEDY = f"cmd:{sys.executable} {EXAMPLES / 'greedy_engine.py'} {{gguf}}"
UNIGRAM = f"cmd:{sys.executable} {ENGINES / 'unigram_engine.py'} {{spm_model}}"
REFERENCE = f"cmd:{sys.executable} {ENGINES / 'reference_engine.py'} {{gguf}}"
SP = f"cmd:{sys.executable} {ENGINES / 'sentencepiece_engine.py'} {{spm_model}}"


def fuzz(model: str, backend: str, tmp_path: Path, cases: int = 6000, **kw) -> tuple[set[str], list]:
    """The failing findings' causes (a tie of equal score is reported, not failing) and every finding,
    after ``cases`` cases (a budget in work: the same on a quiet or a loaded machine)."""
    options = FuzzOptions(seconds=WEEK, cases=cases, seed=0, findings_path=tmp_path / FINDINGS_FILE, **kw)
    _, result = run_fuzz(model, [f"bug={backend}"], CompareOptions(), options)
    return {f.key for f in result.findings if f.failing}, result.findings


# An engine built on tokenizers reads Unicode 16 where llama.cpp (the oracle of a GGUF) reads its own
# tables: the seams find that too (Garay digits, U+10D40), a second real difference of every such engine.
# Where the engine also splits with GPT-2's regex, that split reproduces those texts' ids as well, and
# the run may name them after it (both readings are exact): the tables are then not a finding of their own.
TABLES = "unicode.tables"
MAYBE_TABLES = {"pretokenizer.gpt-2"}


@pytest.mark.parametrize("model, engine, causes", [
    # SentencePiece judged by SentencePiece: nothing but the planted bugs differs.
    pytest.param("kyoto-ja-unigram", f"{SP} --identity --set remove_extra_whitespaces=false",
                 frozenset({"normalizer.none", "whitespace.collapse"}), id="two-bugs-kyoto"),
    pytest.param("kyoto-ja-unigram", f"{SP} --identity", frozenset({"normalizer.none"}), id="identity-kyoto"),
    pytest.param("kyoto-ja-unigram", f"{SP} --set remove_extra_whitespaces=false",
                 frozenset({"whitespace.collapse"}), id="keep-whitespace-kyoto"),
    pytest.param("llama-bpe", f"{HF} --gpt2-split --model ignore_merges=false",
                 frozenset({"pretokenizer.gpt-2", "model.ignore-merges", TABLES}), id="two-bugs-llama-bpe"),
    pytest.param("llama-bpe", f"{HF} --gpt2-split", frozenset({"pretokenizer.gpt-2", TABLES}), id="gpt2-split"),
    pytest.param("llama-bpe", f"{HF} --model ignore_merges=false", frozenset({"model.ignore-merges", TABLES}),
                 id="ignore-merges"),
    # Its first case is reproduced by merges taken by rank too: the finding is settled at the end.
    pytest.param("llama-spm", GREEDY, frozenset({"model.greedy-longest-match"}), id="greedy"),
    pytest.param("botchan-unigram", f"{UNIGRAM} --bug no-nfkc", frozenset({"normalizer.none"}), id="no-nfkc"),
])
def test_each_planted_bug_is_one_finding(zoo, tmp_path, model, engine, causes):
    zoo(model)
    found, findings = fuzz(model, engine, tmp_path)
    expected = {causes, causes - {TABLES}} if causes & MAYBE_TABLES else {causes}
    assert found in expected, [(f.key, f.text, f.count) for f in findings]
    assert all(f.failing or f.key == "model.viterbi-tie" for f in findings)
    for f in findings:
        assert f.count >= 1
        assert f.mismatch.cause.split("+") == [f.key] or f.key in f.mismatch.cause.split("+")
    records = [json.loads(line) for line in (tmp_path / FINDINGS_FILE).read_text("utf-8").split("\n")[:-1]]
    assert {r["cause"] for r in records} - {"model.viterbi-tie"} == found  # as the findings stand at the end


WRAPPED_SP = f"cmd:{sys.executable} {ENGINES / 'blind' / 'wrapped_lib.py'} --spm {{spm_model}}"


@pytest.mark.parametrize("flag, cause", [("--c-string", "input.cut"), ("--whitespace-raw", "input.whitespace-piece"),
                                         ("--strip-leading", "input.strip")])
def test_an_input_bug_is_one_finding_shrunk_short(zoo, tmp_path, flag, cause):
    """The engine written blind around SentencePiece (tests/engines/blind/wrapped_lib.py) with one bug
    of its input handling: one finding, named by its cause, on a text under 100 characters (these
    bugs once gave two or three findings of one text, with no cause)."""
    zoo("mistral-v1")
    found, findings = fuzz("mistral-v1", f"{WRAPPED_SP} {flag}", tmp_path)
    assert found == {cause}, [(f.key, f.text) for f in findings]
    assert all(len(f.text) < 100 for f in findings), [f.text for f in findings]


def test_ecmascript_spaces_on_gpt_2_are_found_first_and_once(zoo, tmp_path):
    """The JavaScript ports' bug (\\s without U+0085), planted in the reference: found within the
    first seconds by the seams, which run first, and one finding though U+FEFF shows it too."""
    zoo("gpt-2")
    found, findings = fuzz("gpt-2", f"{REFERENCE} --space-class ecmascript", tmp_path)
    assert found == {"pretokenizer.regex-engine"}
    (f,) = findings
    assert "\x85" in f.text and f.n < 300 and f.original.corpus == "gen:unicode-seams"
    assert f.mismatch.oracle_ids == (220, 126, 227, 64) and f.mismatch.backend_ids == (1587, 227, 64)


def test_a_run_with_seam_findings_resumes(zoo, tmp_path):
    """Its stored cases hold the seams' tags (a journal refused a list-valued tag on resume)."""
    zoo("gpt-2")
    out = tmp_path / "out"
    argv = ["fuzz", "gpt-2", "-b", f"ecma={REFERENCE} --space-class ecmascript", "-g", "unicode-seams", "-q"]
    assert main([*argv, "--cases", "1500", "--no-hypothesis", "-o", str(out)]) == 1
    stored = [json.loads(x) for x in (out / "cases.jsonl").read_bytes().split(b"\n")[1:-1]]
    assert any(d.get("mismatches") and d["mismatches"][0]["tags"]["codepoint"] == "U+0085" for d in stored)
    assert main(["fuzz", "--resume", str(out), "-q"]) == 1


def test_the_bug_free_twins_give_no_finding_but_the_tables(zoo, tmp_path):
    zoo("llama-bpe")
    zoo("gpt-2")
    seams = {"generators": ["unicode-seams"], "hypothesis": False}  # every seam: the run ends when they do
    found, _ = fuzz("llama-bpe", HF, tmp_path / "hf", cases=100_000, **seams)
    assert found == {TABLES}
    found, _ = fuzz("gpt-2", REFERENCE, tmp_path / "ref", cases=100_000, **seams)
    assert found == set()


def test_a_known_divergence_is_counted_not_failed(zoo, tmp_path):
    """--known FILE, as in compare: the engine's intended split is reviewed, so the run passes."""
    zoo("llama-bpe")
    known = tmp_path / "known.toml"
    known.write_text('''[[divergence]]
id = "mine-splits-like-gpt-2"
models = ["llama-bpe"]
backends = ["mine"]
classes = ["merge-order", "whitespace-runs", "ignore-merges", "pre-tokenizer", "unicode-categories", "split-word",
           "contractions", "digit-grouping", "space-prefix", "normalization"]
cause = "pretokenizer.gpt-2"
reason = "mine uses GPT-2's split on purpose"
upstream = "none: a test"
''', "utf-8")
    argv = ["fuzz", "llama-bpe", "-b", f"mine={HF} --gpt2-split", "--cases", "1500", "-q", "--no-hypothesis"]
    argv += ["--oracle", "hf"]
    assert main([*argv, "-o", str(tmp_path / "plain")]) == 1
    assert main([*argv, "--known", str(known), "-o", str(tmp_path / "known")]) == 0
    summary = json.loads((tmp_path / "known" / "summary.json").read_text("utf-8"))
    findings = summary["options"]["fuzz"]["findings"]
    assert findings and {f["known"] for f in findings} == {"mine-splits-like-gpt-2"}
    assert {f["key"] for f in findings} == {"known:mine-splits-like-gpt-2"}
    assert summary["runs"][0]["unexplained"] == 0 and summary["runs"][0]["mismatches"] > 100


def test_the_journal_counts_cases_and_stays_small(zoo, tmp_path):
    """Every case is counted in the journal, but only the first cases of each cause are stored
    one by one: 15 s of a bug that fails a fifth of all cases writes well under a megabyte a second."""
    zoo("llama-bpe")
    out = tmp_path / "out"
    code = main(["fuzz", "llama-bpe", "-b", f"bug={HF} --gpt2-split", "--cases", "3000", "-q", "-o", str(out)])
    assert code == 1
    lines = [json.loads(x) for x in (out / "cases.jsonl").read_bytes().split(b"\n")[1:-1]]
    stored = [d for d in lines if "n" in d]
    counted = [d["note"]["counted"] for d in lines if "counted" in d.get("note", {})]
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    cases = summary["options"]["fuzz"]["cases"]
    assert sum(c["to"] - c["from"] for c in counted) == cases > 2000
    assert 0 < len(stored) <= 100 * 2  # (a case of two causes is stored for both)
    assert all(d["mismatches"] and d["mismatches"][0]["cause"] for d in stored)  # stored in full, with the cause
    assert sum(s["count"] for c in counted for s in c["shapes"]) + len(stored) == cases
    assert (out / "cases.jsonl").stat().st_size < 15 * 400_000


# -- steering -----------------------------------------------------------------------------------


def endless(name: str):
    n = 0
    while True:
        yield Case(f"{name}-{n}", f"{name} {n}", f"gen:{name}", {})
        n += 1


def test_steering_gives_way_to_generators_that_are_not_only_explained():
    steering = Steering({"explained": endless("explained"), "quiet": endless("quiet")})
    picked = []
    for case in islice(steering, 2000):
        name = case.corpus[4:]
        picked.append(name)
        steering.update(name, EXPLAINED if name == "explained" else AGREED)
    last = picked[-1000:]
    assert last.count("quiet") / last.count("explained") == pytest.approx(1 / FLOOR, rel=0.1)
    steering.update("explained", NEW)  # something new: full weight again
    assert steering.weight("explained") == 1.0


def test_steering_runs_the_seams_first():
    seams = iter([Case(f"s{i}", f"s{i}", "gen:unicode-seams", {}) for i in range(5)])
    steering = Steering({"quiet": endless("quiet"), "unicode-seams": seams})
    assert [c.corpus for c in islice(steering, 7)] == ["gen:unicode-seams"] * 5 + ["gen:quiet"] * 2


NEWCOMER = ENGINES / "blind" / "newcomer3_port.py"


@pytest.mark.parametrize("engine, causes", [("Engine", {"pretokenizer.contractions", TABLES}), ("Twin", {TABLES})])
def test_a_newcomers_lower_case_contractions_are_named_not_another_models_regex(zoo, tmp_path, engine, causes):
    """A newcomer's hand-written Llama 3 port (tests/engines/blind/newcomer3_port.py) spells the
    contractions in lower case only. Its regex module's newer Unicode tables are a second
    difference. Poro's whole split regex gives both by coincidence, and won on credit: every row
    read pretokenizer.poro. The fuzz run now tries each case's variants on texts the engine agreed
    on, and Poro's changes them. The twin (Llama 3's own contractions) shows the tables alone."""
    zoo("llama-bpe")
    found, findings = fuzz("llama-bpe", f"py:{NEWCOMER}:{engine}", tmp_path)
    assert found == causes, [(f.key, f.text, f.count) for f in findings]
