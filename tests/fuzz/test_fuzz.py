"""``fuzz``: engines with planted bugs are caught fast and shrunk to a few characters; correct
engines are not accused; findings are a corpus ready to commit; the CLI's exit statuses."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tokparity.cli import main
from tokparity.commands.arguments import WEEK
from tokparity.corpus import load_corpus
from tokparity.fuzz.findings import FINDINGS_FILE
from tokparity.fuzz.loop import FuzzOptions, run_fuzz
from tokparity.fuzz.shrink import shrink
from tokparity.run.options import CompareOptions

ENGINES = Path(__file__).resolve().parents[1] / "engines"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "engines"  # the README's demo engines
GREEDY = f"cmd:{{python}} {EXAMPLES / 'greedy_engine.py'} {{gguf}}"
BPE = f"cmd:{{python}} {ENGINES / 'bpe_engine.py'} {{tokenizer_json}} --bug"
UNIGRAM = f"cmd:{{python}} {ENGINES / 'unigram_engine.py'} {{spm_model}} --bug"


# -- the shrinker ---------------------------------------------------------------------------------


def test_shrink_removes_everything_not_needed():
    text, probes = shrink("hello world, and more", lambda t: "o w" in t)
    assert text == "o w"
    assert 0 < probes < 200


def test_shrink_simplifies_characters():
    assert shrink("ÉÉÉ ", lambda t: len(t) >= 2)[0] == "aa"
    assert shrink("x\u3000\u3000y", lambda t: any(c.isspace() for c in t))[0] == " "
    assert shrink("Ｂ", lambda t: t.lower() == t and t.isalpha())[0] == "a"


def test_shrink_stops_at_its_deadline():
    slow_calls = []

    def slow(t):
        slow_calls.append(t)
        time.sleep(0.01)
        return True

    started = time.monotonic()
    text, _ = shrink("x" * 1000, slow, deadline=time.monotonic() + 0.2)
    assert time.monotonic() - started < 1.0
    assert len(text) < 1000


def test_shrink_starts_where_the_ids_part():
    """A 3,000-character text whose failure is local: around the place the two sides part, a few
    windows are tried first, and delta debugging then works on tens of characters; on the whole
    text, within the same budget of attempts, it would still be hundreds of characters long."""
    text = "".join(f"word{i} " for i in range(500))[:3000]
    at = text.index("word250")
    text = text[:at] + "o w" + text[at:]
    fails = lambda t: "o w" in t  # noqa: E731
    focused, tries = shrink(text, fails, focus=at + 1)
    assert focused == "o w" and tries < 150
    budget = {"left": tries}

    def counted(t: str) -> bool:
        budget["left"] -= 1
        if budget["left"] < 0:
            raise TimeoutError
        return fails(t)

    with pytest.raises(TimeoutError):
        shrink(text, counted)  # without the focus, the same number of attempts is not enough


# -- planted bugs ---------------------------------------------------------------------------------


def fuzz(model, backend, tmp_path, cases=6000, oracle=None, **kw):
    """``oracle``: "hf" for an engine built on tokenizers, judged against the library it runs (against
    llama.cpp the seams would first find where the two read Unicode 16 digits differently). The
    budget is ``cases``, not seconds: the same run on a quiet or a loaded machine."""
    options = FuzzOptions(seconds=WEEK, cases=cases, seed=kw.pop("seed", 0), exitfirst=kw.pop("exitfirst", True),
                          findings_path=tmp_path / FINDINGS_FILE, **kw)
    return run_fuzz(model, [backend], CompareOptions(oracle=oracle), options)[1]


def test_greedy_longest_match_is_caught_and_shrunk(zoo, tmp_path):
    """The Gemma 3 bug (greedy longest-match instead of SentencePiece merges), against llama.cpp."""
    zoo("llama-spm")
    result = fuzz("llama-spm", GREEDY, tmp_path)
    assert result.failed
    finding = result.findings[0]
    assert finding.n < 300, finding.n
    assert 1 <= len(finding.text) <= 4, finding.text
    assert finding.cls in ("merge-order", "whitespace-runs")
    m = finding.mismatch
    assert m.oracle == "llama.cpp" and m.oracle_ids != m.backend_ids
    # the finding replays as a corpus
    (case,) = list(load_corpus(str(tmp_path / FINDINGS_FILE)))
    assert case.text == finding.text
    assert case.tags == {"kind": "fuzz", "class": finding.cls, "backend": GREEDY, "model": "llama-spm",
                         "oracle": "llama.cpp", "found_by": finding.original.corpus, "seed": 0}


def test_bpe_digit_groups_bug_is_caught(zoo, tmp_path):
    """Llama 3's split regex with \\p{N}+ instead of \\p{N}{1,3} (the Falcon digits bug)."""
    zoo("llama-bpe")
    result = fuzz("llama-bpe", f"{BPE} digits", tmp_path, oracle="hf")
    (finding,) = result.findings
    assert finding.n < 5000, finding.n  # among the first generated texts after the seams (4,654 on llama-bpe)
    assert len(finding.text) <= 6 and any(c.isdigit() for c in finding.text), finding.text
    assert len(finding.text.strip()) >= 4  # three digits are one group either way


def test_bpe_case_sensitive_contractions_are_caught(zoo, tmp_path):
    zoo("llama-bpe")
    result = fuzz("llama-bpe", f"{BPE} contractions", tmp_path, oracle="hf")
    (finding,) = result.findings
    assert finding.n < 5000, finding.n  # among the first generated texts after the seams
    assert "'" in finding.text and len(finding.text) <= 6, finding.text


def test_unigram_kept_whitespace_is_caught(zoo, tmp_path):
    """remove_extra_whitespaces lost (T5 slow vs fast, tokenizers #1250), against SentencePiece."""
    zoo("botchan-unigram")
    result = fuzz("botchan-unigram", f"{UNIGRAM} keep-whitespace", tmp_path, exitfirst=False, cases=600)
    assert result.findings
    for finding in result.findings:
        assert finding.oracle == "sentencepiece"
        assert len(finding.text) <= 3 and " " in finding.text, finding.text
    assert "whitespace-collapse" in {f.cls for f in result.findings}


def test_unigram_without_nfkc_is_caught(zoo, tmp_path):
    zoo("botchan-unigram")
    result = fuzz("botchan-unigram", f"{UNIGRAM} no-nfkc", tmp_path)
    (finding,) = result.findings
    assert finding.n < 300 and len(finding.text) <= 4, (finding.n, finding.text)


def test_crashing_engine_is_shrunk_to_the_crashing_character(zoo, tmp_path):
    """An engine that dies on astral-plane characters: every shrinking step restarts it, and it must
    not be given up as one that cannot start (which would make every text 'crash')."""
    zoo("botchan-unigram")
    result = fuzz("botchan-unigram", f"{UNIGRAM} crash-astral", tmp_path)
    (finding,) = result.findings
    assert finding.cls == "crash"
    assert len(finding.text) == 1 and ord(finding.text) > 0xFFFF, finding.text


def test_correct_engine_is_not_accused(zoo, tmp_path):
    zoo("botchan-unigram")
    options = FuzzOptions(seconds=WEEK, cases=7000, seed=0, exitfirst=False, findings_path=tmp_path / FINDINGS_FILE)
    results, result = run_fuzz("botchan-unigram", [f"{UNIGRAM} none"], CompareOptions(), options)  # (the seams come first)
    assert not result.findings and not result.failed
    assert result.cases > 500
    assert results.fuzz is not None
    assert len(result.by_source) == len(results.fuzz.by_source) >= 10  # every generator ran
    assert "hypothesis" in result.by_source
    assert (tmp_path / FINDINGS_FILE).read_text() == ""


def test_same_seed_same_finding(zoo, tmp_path):
    zoo("llama-spm")
    a = fuzz("llama-spm", GREEDY, tmp_path / "a", seed=5, hypothesis=False)
    b = fuzz("llama-spm", GREEDY, tmp_path / "b", seed=5, hypothesis=False)
    assert [f.text for f in a.findings] == [f.text for f in b.findings]
    assert a.findings[0].original == b.findings[0].original


# -- the command line -----------------------------------------------------------------------------


def test_cli_writes_reports_and_findings(zoo, tmp_path, capsys):
    zoo("llama-spm")
    out = tmp_path / "out"
    code = main(["fuzz", "llama-spm", "-b", GREEDY, "--cases", "3000", "-x", "-q", "-o", str(out)])
    assert code == 1
    for name in ("report.html", "mismatches.csv", "summary.md", "summary.json", FINDINGS_FILE):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    (run,) = summary["runs"]
    assert run["model"] == "llama-spm" and run["oracle"] == "llama.cpp" and run["mismatches"] >= 1
    (finding,) = summary["options"]["fuzz"]["findings"]
    records = [json.loads(line) for line in (out / FINDINGS_FILE).read_text("utf-8").split("\n")[:-1]]
    assert [r["text"] for r in records] == [finding["text"]]
    stdout = capsys.readouterr().out
    assert repr(finding["text"]) in stdout and "findings:" in stdout


def test_cli_exit_zero_when_nothing_found(zoo, tmp_path):
    zoo("botchan-unigram")
    code = main(["fuzz", "botchan-unigram", "-b", f"{UNIGRAM} none", "--seconds", "2", "-q", "--no-hypothesis",
                 "-g", "ascii-pairs", "-g", "whitespace", "-o", str(tmp_path)])
    assert code == 0


@pytest.mark.parametrize("argv, message", [
    pytest.param(["--seconds", "0"], "argument --seconds: must be a number of seconds, more than 0", id="seconds"),
    pytest.param(["-g", "nope"], "unknown generator 'nope'", id="generator"),
    pytest.param(["-b", "sentencepiece"], "nothing to fuzz", id="only-oracle"),
])
def test_cli_bad_input_is_exit_2(zoo, tmp_path, capsys, argv, message):
    zoo("botchan-unigram")
    code = main(["fuzz", "botchan-unigram", "-q", "-o", str(tmp_path), *argv])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_a_known_divergence_found_by_fuzz_needs_no_fix(zoo, tmp_path, capsys):
    """The README's template engine runs tokenizers, whose Unicode tables are newer than llama.cpp's.
    Fuzz finds that known divergence. Its cause is reproduced and counted, as in a compare run, and
    explain says it needs no fix; it never says "no cause reproduced" for it."""
    zoo("llama-bpe")
    out = tmp_path / "out"
    engine = f"mine=cmd:{{python}} {EXAMPLES / 'template_engine.py'} {{tokenizer_json}}"
    code = main(["fuzz", "llama-bpe", "-b", engine, "--cases", "6000", "-g", "unicode-seams", "--no-hypothesis",
                 "-q", "-o", str(out)])
    assert code == 0
    (run,) = json.loads((out / "summary.json").read_text())["runs"]
    assert run["mismatches"] >= 1 and run["unexplained"] == 0
    assert run["causes"] == {"unicode.tables": run["mismatches"]}
    capsys.readouterr()
    assert main(["explain", str(out)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "No cause reproduced" not in said and "no cause reproduced" not in said
    assert (f"unicode.tables: No fix needed. Its {run['mismatches']} cases are the reviewed known divergence "
            "llama-cpp-unicode-tables-before-16.") in said, said
