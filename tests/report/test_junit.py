"""CI-native outputs: ``--junit FILE`` (compare, fuzz, regress) and ``$GITHUB_STEP_SUMMARY``.

Real runs on llama-spm's edge corpus: the greedy longest-match engine (examples/engines/greedy_engine.py,
named ``mine``) disagrees on 181 cases, tokparity's reference on none. The XML is parsed with
xml.etree (and with junitparser where it is installed) and its counts checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tokparity.records import Mismatch
from tokparity.report.ci import FAILURE_CASES, append_step_summary, render_junit, write_junit, xml_safe
from tokparity.run.results import Results, RunSummary

ROOT = Path(__file__).resolve().parents[2]
GREEDY = "mine=cmd:{python} " + str(ROOT / "examples" / "engines" / "greedy_engine.py") + " {gguf}"
GREEDY_MISMATCHES = 181


def tokparity(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    base["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True,
                          timeout=timeout, env={**base, **(env or {})}, cwd=ROOT)


def cases_of(root: ET.Element) -> dict[str, ET.Element]:
    return {f"{c.get('classname')}/{c.get('name')}": c for c in root.iter("testcase")}


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory):
    """compare with the greedy engine, --junit and a GITHUB_STEP_SUMMARY that already holds a step's text."""
    tmp = tmp_path_factory.mktemp("junit")
    step = tmp / "step_summary.md"
    step.write_text("## an earlier step\n", "utf-8")
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", GREEDY, "-b", "ref", "--no-diagnose", "-q",
                     "-o", str(tmp / "out"), "--junit", str(tmp / "junit.xml"), env={"GITHUB_STEP_SUMMARY": str(step)})
    return proc, tmp


def test_junit_of_a_failing_run(failing_run):
    proc, tmp = failing_run
    assert proc.returncode == 1, proc.stderr
    root = ET.parse(tmp / "junit.xml").getroot()
    assert root.tag == "testsuites" and root.get("name") == "tokparity compare"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "0")
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("name"), suite.get("tests"), suite.get("failures")) == ("llama-spm", "3",
                                                                                                     "1")
    cases = cases_of(root)
    assert set(cases) == {"llama-spm/mine", "llama-spm/ref", "llama-spm/llama.cpp"}
    assert cases["llama-spm/ref"].find("failure") is None
    failure = cases["llama-spm/mine"].find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith(f"{GREEDY_MISMATCHES} mismatches to review against golden/llama.cpp")
    body = failure.text or ""
    listed = [line for line in body.splitlines() if line.startswith("edge/")]
    assert len(listed) == FAILURE_CASES  # the first ten, id and text
    assert listed[0].startswith("edge/ascii-0096 (whitespace-runs): ' !'")
    assert "oracle   29871 1738" in body and "backend  259 29991" in body  # the ids side by side
    assert f"and {GREEDY_MISMATCHES - FAILURE_CASES} more mismatches to review" in body
    assert not list(tmp.glob(".junit.xml.*"))  # no temporary file left


def test_step_summary_appended(failing_run):
    _, tmp = failing_run
    step = (tmp / "step_summary.md").read_text("utf-8")
    summary_md = (tmp / "out" / "summary.md").read_text("utf-8")
    assert step == "## an earlier step\n" + summary_md
    assert "| llama-spm | golden/llama.cpp | mine | 884 | 181 | 181 |" in step
    # (a run made with --no-diagnose tried no variant: it says so, never that none reproduced them)
    assert "the run was made with --no-diagnose, so no cause was looked for" in summary_md
    assert "reproduc" not in summary_md
    page = (tmp / "out" / "report.html").read_text("utf-8")
    assert "not reproduced" not in page.lower() and "not diagnosed (the run was made with --no-diagnose)" in page


def test_junit_of_a_run_that_agrees(tmp_path):
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", "ref", "--no-diagnose", "-q",
                     "-o", str(tmp_path / "out"), "--junit", str(tmp_path / "junit.xml"))
    assert proc.returncode == 0, proc.stderr
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert (root.get("tests"), root.get("failures")) == ("2", "0")
    assert not list(root.iter("failure"))
    assert not (tmp_path / "step_summary.md").exists()  # no GITHUB_STEP_SUMMARY: nothing appended anywhere


def test_known_divergences_are_not_failures(tmp_path):
    known = tmp_path / "known.toml"
    known.write_text('[[divergence]]\nid = "greedy-is-greedy"\nmodels = ["llama-spm"]\nbackends = ["mine"]\n'
                     'classes = ["whitespace-runs", "merge-order"]\nreason = "greedy on purpose"\n'
                     'upstream = "tests/engines"\n', "utf-8")
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", GREEDY, "--known", str(known), "--no-builtin-known",
                     "--no-diagnose", "-q", "-o", str(tmp_path / "out"), "--junit", str(tmp_path / "junit.xml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert root.get("failures") == "0" and not list(root.iter("failure"))
    out = cases_of(root)["llama-spm/mine"].findtext("system-out") or ""
    assert f"{GREEDY_MISMATCHES} mismatches, 0 to review" in out and f"{GREEDY_MISMATCHES} known divergences" in out
    assert "known: greedy-is-greedy" in out


def test_junit_parses_with_junitparser(failing_run):
    import junitparser  # (in the test extra: a second reader of the format CI systems read)
    _, tmp = failing_run
    xml = junitparser.JUnitXml.fromfile(str(tmp / "junit.xml"))
    results = {(case.classname, case.name): [type(r).__name__ for r in case.result] for suite in xml for case in suite}
    assert results == {("llama-spm", "llama.cpp"): [], ("llama-spm", "mine"): ["Failure"], ("llama-spm", "ref"): []}


def test_fuzz_and_regress_write_junit(tmp_path):
    fuzz = tokparity("fuzz", "llama-spm", "-b", GREEDY, "--cases", "2000", "--no-hypothesis", "-x", "-g", "ascii-pairs",
                     "-q", "-o", str(tmp_path / "fuzz"), "--junit", str(tmp_path / "fuzz.xml"))
    assert fuzz.returncode == 1, fuzz.stdout + fuzz.stderr
    root = ET.parse(tmp_path / "fuzz.xml").getroot()
    assert (root.get("name"), root.get("tests"), root.get("failures")) == ("tokparity fuzz", "1", "1")
    assert cases_of(root)["llama-spm/mine"].find("failure") is not None

    goldens = tmp_path / "goldens"
    assert tokparity("regress", "--update", "llama-spm", "-c", "edge", "--goldens", str(goldens), "-q").returncode == 0
    regress = tokparity("regress", "llama-spm", "--goldens", str(goldens), "-b", "ref", "-q", "-o",
                        str(tmp_path / "regress"), "--junit", str(tmp_path / "regress.xml"))
    assert regress.returncode == 0, regress.stderr
    root = ET.parse(tmp_path / "regress.xml").getroot()
    assert (root.get("name"), root.get("tests"), root.get("failures")) == ("tokparity regress", "1", "0")


def test_unwritable_junit_is_one_line_exit_2(tmp_path):
    (tmp_path / "a-file").write_text("x", "utf-8")  # (junit.xml under a file: found only when written)
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", "ref", "--no-diagnose", "-q",
                     "-o", str(tmp_path / "out"), "--junit", str(tmp_path / "a-file" / "junit.xml"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("tokparity: error: --junit ")
    assert (tmp_path / "out" / "summary.json").is_file()  # the reports are there all the same


def test_a_folder_where_junit_should_go_is_refused_before_the_run(tmp_path):
    (tmp_path / "junit.xml").mkdir()
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", "ref", "--no-diagnose", "-q",
                     "-o", str(tmp_path / "out"), "--junit", str(tmp_path / "junit.xml"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "is a folder; tokparity writes a regular file of its own" in proc.stderr


# -- hostile text ---------------------------------------------------------------------------------

HOSTILE = "a\x01b\x00c\x0b\x1b[31m\ud800\ufffe]]><&\"'\u2028 end"


def hostile_results() -> Results:
    m = Mismatch.of(model="m\x02odel", corpus="c\x03", case_id="id\x04]]>", tags={}, oracle="or\x05", backend="b\x06<",
                 cls="merge-order", evidence="e\x07", stage="model", first_diff=0, text=HOSTILE,
                 oracle_ids=[1, 2], backend_ids=[3], oracle_pieces=["\x08x", "y\x0c"], backend_pieces=["\ud801z"])
    k = Mismatch.of(**{**m.fields(), "case_id": "known-1", "known": "k\x0e"})
    run = RunSummary("m\x02odel", "or\x05", "b\x06<", cases=3, mismatches=2, unexplained=1, classes={"merge-order": 2})
    return Results(tokparity="0", runs=[run], mismatches=[m, k])


def test_xml_safe_escapes_what_xml_cannot_hold():
    assert xml_safe("a\x01b\x00\ud800\ufffe\tok\n") == "a\\x01b\\x00\\ud800\\ufffe\tok\n"
    assert xml_safe("ordinary ▁text ✓ 𝄞") == "ordinary ▁text ✓ 𝄞"


def test_hostile_text_parses(tmp_path):
    path = write_junit(hostile_results(), tmp_path / "j.xml", "compare")
    root = ET.parse(path).getroot()  # would raise on a control character
    (case,) = root.iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("m\\x02odel", "b\\x06<")
    failure = case.find("failure")
    assert failure is not None
    body = failure.text or ""
    assert "id\\x04]]>" in body and repr(HOSTILE) in body  # the text as a Python literal, whole
    assert "\\x01" in body and "\x01" not in body and "\ud800" not in body
    assert "known: k\\x0e" in (case.findtext("system-out") or "")
    assert ET.fromstring(render_junit(hostile_results(), "compare").encode("utf-8")).tag == "testsuites"


def test_step_summary_failure_is_a_warning(tmp_path, capsys):
    assert append_step_summary("# x\n", {"GITHUB_STEP_SUMMARY": str(tmp_path)}) is None  # a folder: cannot append
    assert "GITHUB_STEP_SUMMARY" in capsys.readouterr().err
    assert append_step_summary("# x\n", {}) is None
    target = tmp_path / "s.md"
    assert append_step_summary("# x", {"GITHUB_STEP_SUMMARY": str(target)}) == target
    assert append_step_summary("# y\n", {"GITHUB_STEP_SUMMARY": str(target)}) == target
    assert target.read_text("utf-8") == "# x\n# y\n"
