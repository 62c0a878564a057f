"""``compare --check``: what each model's files hold, in every report of a compare run, and in its
exit status. The models are the zoo's real files; the unreadable one is Llama 3's published files
with a generation_config.json the test writes, said so."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest


def compare(out, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity.cli", "compare", *args, "-c", "edge", "--check", "-o",
                           str(out)], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def gpt_oss_run(zoo, tmp_path_factory):
    zoo("gpt-oss")
    out = tmp_path_factory.mktemp("check") / "gpt-oss"
    return compare(out, "gpt-oss", "--junit", str(out.parent / "junit.xml")), out


def test_a_broken_property_is_in_every_report_and_exits_1(gpt_oss_run):
    """gpt-oss's tokenizer_config.json lacks the tool call's <|call|>: the run agrees on every text it
    does not know a divergence for, and still exits 1 for its files."""
    proc, out = gpt_oss_run
    assert proc.returncode == 1, proc.stderr[-800:]
    assert "What the files hold" in proc.stdout
    assert "gpt-oss / end-of-generation: ✗ 200012 '<|call|>' is missing from tokenizer_config.json eos_token" \
        in " ".join(proc.stdout.split())
    summary = (out / "summary.md").read_text()
    assert "| gpt-oss | ✗ broken | ✓ held | ✗ broken | ✓ held |" in summary
    # (the title says it too: a run that exits 1 is never headed ✅)
    assert "❌ 2 broken properties of the model's files" in summary.splitlines()[0]
    junit = (out.parent / "junit.xml").read_text()
    assert '<testcase classname="gpt-oss" name="files"' in junit and 'message="end-of-generation, multi-turn-prefix broken"' in junit
    assert "What the files hold" in (out / "report.html").read_text()
    (checked,) = json.loads((out / "summary.json").read_text())["checks"]
    assert checked["model"] == "gpt-oss" and checked["broken"] is True
    assert [p["status"] for p in checked["properties"]] == ["broken", "held", "broken", "held"]


def test_explain_reads_the_checks_back(gpt_oss_run):
    _proc, out = gpt_oss_run
    said = subprocess.run([sys.executable, "-m", "tokparity.cli", "explain", str(out)], capture_output=True,
                          text=True, timeout=120)
    assert said.returncode == 0, said.stderr
    text = " ".join(said.stdout.split())
    assert "gpt-oss / end-of-generation: broken" in text
    assert "Example: a tool call that ends with '<|call|>'." in text


def test_files_that_hold_leave_the_exit_status_to_the_cases(zoo, tmp_path):
    zoo("gpt-2")
    proc = compare(tmp_path / "gpt-2", "gpt-2", "-b", "ref")
    assert proc.returncode == 0, proc.stdout[-800:] + proc.stderr[-800:]
    assert "every property checked holds on every model" in proc.stdout


def test_a_run_without_check_writes_no_section(zoo, tmp_path):
    zoo("gpt-2")
    out = tmp_path / "plain"
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "compare", "gpt-2", "-b", "ref", "-c", "edge",
                           "-o", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-800:]
    assert "What the files hold" not in proc.stdout + (out / "summary.md").read_text()
    assert "checks" not in json.loads((out / "summary.json").read_text())


def test_files_the_checks_cannot_read_keep_the_cases(zoo, tmp_path):
    """Llama 3's published tokenizer files and a generation_config.json the test writes with an
    eos_token_id that is no id: each property says it was not read, and the cases stay judged."""
    model = zoo("llama-bpe")
    folder = tmp_path / "llama3"
    folder.mkdir()
    shutil.copyfile(model.files["tokenizer_json"], folder / "tokenizer.json")
    shutil.copyfile(model.files["tokenizer_config"], folder / "tokenizer_config.json")
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": "the end"}))
    out = tmp_path / "out"
    proc = compare(out, str(folder), "-b", "ref")
    summary = json.loads((out / "summary.json").read_text())
    assert sum(r["cases"] for r in summary["runs"]) > 800, proc.stderr[-800:]
    (checked,) = summary["checks"]
    assert "nothing could be checked: not read:" in proc.stdout  # (nothing checked is no green)
    assert {p["status"] for p in checked["properties"]} == {"not checked"}
    assert all("generation_config.json: eos_token_id must be an id or a list of ids" in p["why"]
               for p in checked["properties"])
