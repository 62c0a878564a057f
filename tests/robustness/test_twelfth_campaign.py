"""What the twelfth hostile campaign broke (a helper told only docs/robustness.md's promises, on
a2149cf), each as a user or an attacker does it. Each test failed before its fix, but the one
on an engine that fails every case: it pins the corrected promise.

- a file written whole was opened again by its temporary name: a link put in its place between
  the two opens was written through (``convert``, the reports);
- ``--resume`` from another folder ran a ``cmd:`` engine's relative script from that folder;
- an engine that fails on every case: the promise said exit 2, the code gives exit 1 and ❌ (the promise
  now says which);
- ``--junit`` replaced an XML file that only mentions ``<testsuites>``;
- ``$GITHUB_STEP_SUMMARY`` made a new ``.py`` file;
- a journal key with a space or a CR beside its digits was taken;
- standard output or standard error closed, or error full: a traceback, or no reports;
- an interrupted run's reports said ✅;
- ``explain`` printed a newline in a folder's name as a space.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from cli_runs import one_error, tokparity

from tokparity.whole_files import write_whole

ENGINES = Path(__file__).resolve().parents[2] / "examples" / "engines"
PLANTED = "import sys\nopen({mark!r}, 'w').close()\nsys.exit(3)\n"


def test_a_link_put_in_place_of_the_temporary_file_is_not_written_through(tmp_path):
    """The attacker, able to write in the output folder, swaps the fresh temporary file for a link
    to a file of theirs' choosing between its creation and its writing."""
    victim, target = tmp_path / "victim.txt", tmp_path / "out" / "report.html"
    victim.write_text("ORIGINAL", "utf-8")
    target.parent.mkdir()

    def swap_then_write(given: Path) -> None:
        (temporary,) = [p for p in target.parent.iterdir() if p.name.startswith(".report.html.")]
        temporary.unlink()
        temporary.symlink_to(victim)
        given.write_text("<html>REPORT</html>", "utf-8")

    with pytest.raises(OSError, match="replaced while it was written"):
        write_whole(target, swap_then_write)
    assert victim.read_text("utf-8") == "ORIGINAL" and not target.exists()


def test_a_file_written_whole_is_written_through_its_own_descriptor(tmp_path):
    target = tmp_path / "report.html"
    write_whole(target, lambda given: given.write_text("whole", "utf-8"))
    assert target.read_text("utf-8") == "whole" and [p.name for p in tmp_path.iterdir()] == ["report.html"]


@pytest.mark.parametrize("kind", ["cmd", "py"])
def test_a_resume_runs_its_engines_in_the_folder_the_run_began_in(tmp_path, zoo, kind):
    """The run began in ``began`` with an engine named by a relative path. Resumed from ``other``,
    whose file of that name plants a mark, the first folder's engine runs, as the journal says."""
    zoo("llama-spm")
    began, other = tmp_path / "began", tmp_path / "other"
    began.mkdir()
    other.mkdir()
    mark = tmp_path / "PLANTED"
    if kind == "cmd":
        (began / "eng.py").write_text((ENGINES / "greedy_engine.py").read_text("utf-8"), "utf-8")
        (other / "eng.py").write_text(PLANTED.format(mark=str(mark)), "utf-8")
        engine = "mine=cmd:{python} eng.py {gguf}"
    else:
        (began / "eng.py").write_text("from tokparity.backends.registry import make_backend\n"
                                      "from tokparity.zoo import resolve_model\n"
                                      "ref = make_backend('ref', resolve_model('llama-spm'))\n"
                                      "def encode(text, add_special, parse_special):\n"
                                      "    return ref.encode(text, add_special, parse_special)\n", "utf-8")
        (other / "eng.py").write_text(PLANTED.format(mark=str(mark)) + "def encode(*a):\n    return []\n", "utf-8")
        engine = "mine=py:eng.py:encode"
    done = tokparity("compare", "llama-spm", "-c", "edge", "-b", engine, "-o", str(tmp_path / "out"), "-q", cwd=began)
    assert done.returncode in (0, 1), done.stderr
    journal = tmp_path / "out" / "cases.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    whole = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))["runs"]
    journal.write_bytes(b"".join(lines[:len(lines) // 2]))
    again = tokparity("compare", "--resume", str(tmp_path / "out"), "-q", cwd=other)
    assert again.returncode == done.returncode, again.stderr
    assert not mark.exists()
    resumed = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))["runs"]
    assert [(r["backend"], r["cases"], r["mismatches"]) for r in resumed] == \
        [(r["backend"], r["cases"], r["mismatches"]) for r in whole]


@pytest.mark.parametrize("engine", ["cmd:false", "cmd:{python} answers_errors.py"])
def test_an_engine_that_fails_on_every_case_is_never_ok(tmp_path, zoo, engine):
    """Its failures are unexplained mismatches: exit 1, its title ❌ (nothing compared, exit 2, only
    where known divergences cover them all: test_sixth_campaign.py). The campaign read the promise
    as exit 2 in both; the promise now says which."""
    zoo("botchan-unigram")
    (tmp_path / "answers_errors.py").write_text(
        "import json, sys\nfor line in sys.stdin:\n"
        "    print(json.dumps({'id': json.loads(line)['id'], 'error': 'nope'}), flush=True)\n", "utf-8")
    (tmp_path / "two.txt").write_text("hello\nworld\n", "utf-8")
    done = tokparity("compare", "botchan-unigram", "-c", "two.txt", "-b", f"e={engine}", "-o", "out", "-q", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "out" / "summary.md").read_text("utf-8").splitlines()[0].startswith("# tokparity 0.1.0: ❌")


@pytest.mark.parametrize("xml", [
    '<?xml version="1.0"?>\n<!-- <testsuites> -->\n<project><modelVersion>4.0.0</modelVersion></project>\n',
    "<config><a/></config>\n<testsuites/>\n",
])
def test_junit_refuses_an_xml_file_whose_root_is_not_a_test_suite(tmp_path, zoo, xml):
    zoo("botchan-unigram")
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    (tmp_path / "pom.xml").write_text(xml, "utf-8")
    done = tokparity("compare", "botchan-unigram", "-c", "one.txt", "-b", "ref", "-o", "out", "--junit", "pom.xml",
                     cwd=tmp_path)
    assert "--junit" in one_error(done) and (tmp_path / "pom.xml").read_text("utf-8") == xml


def test_junit_replaces_its_own_report(tmp_path, zoo):
    zoo("botchan-unigram")
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    for _ in range(2):  # (the second run replaces the first's report, a declaration before its root)
        done = tokparity("compare", "botchan-unigram", "-c", "one.txt", "-b", "ref", "-o", "out", "--junit", "j.xml",
                         cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "j.xml").read_text("utf-8").startswith("<?xml")


def test_the_step_summary_makes_no_new_file_of_another_kind(tmp_path, zoo):
    zoo("botchan-unigram")
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    done = tokparity("compare", "botchan-unigram", "-c", "one.txt", "-b", "ref", "-o", "out", cwd=tmp_path,
                     env={"GITHUB_STEP_SUMMARY": str(tmp_path / "new.py")})
    assert "GITHUB_STEP_SUMMARY" in one_error(done) and not (tmp_path / "new.py").exists()


def _rewritten(change):
    return lambda key: key.write_bytes(change(key.read_bytes()))


def _linked(key: Path) -> None:  # (a link may point at a file anyone can write)
    os.replace(key, key.with_name("elsewhere"))
    os.symlink(key.with_name("elsewhere"), key)


@pytest.mark.parametrize("spoil", [
    _rewritten(lambda k: b" " + k), _rewritten(lambda k: k.rstrip(b"\n") + b"\r\n"), _rewritten(lambda k: k + b"\n"),
    # (a fifteenth campaign's: no newline, and a link to a key)
    _rewritten(lambda k: k.rstrip(b"\n")), _linked], ids=["space", "crlf", "two-newlines", "no-newline", "link"])
def test_a_journal_key_not_as_tokparity_wrote_it_is_refused(tmp_path, zoo, spoil):
    """The key signs the journal of a run that names an engine."""
    model = zoo("llama-spm").files["gguf"]
    cache = tmp_path / "cache"
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    env = {"TOKPARITY_CACHE": str(cache)}
    run = ("compare", str(model), "-c", "one.txt", "-b", f"cmd:{{python}} {ENGINES / 'greedy_engine.py'} {{gguf}}", "-q")
    done = tokparity(*run, "-o", "out", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    key = cache / "journal-key"
    spoil(key)
    again = tokparity(*run, "-o", "out2", cwd=tmp_path, env=env)
    assert "not a journal key tokparity made" in one_error(again)


@pytest.mark.parametrize("closed", [{"stdout": None}, {"stderr": None}, {"stderr": "full"}])
def test_a_closed_or_full_standard_stream_loses_no_report(tmp_path, zoo, closed):
    zoo("botchan-unigram")
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    argv = [sys.executable, "-P", "-m", "tokparity", "compare", "botchan-unigram", "-c", "one.txt", "-b", "ref",
            "-o", "out"]
    (name, how), = closed.items()
    script = f"exec {'1' if name == 'stdout' else '2'}{'>&-' if how is None else '>/dev/full'}; exec \"$@\""
    import subprocess
    done = subprocess.run(["sh", "-c", script, "sh", *argv], cwd=tmp_path, capture_output=name == "stderr",
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}, timeout=300,
                          text=True, **({} if name == "stderr" else {"stderr": subprocess.PIPE}))
    assert done.returncode == 0 and "Traceback" not in (done.stderr or ""), done.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))["complete"]


def test_explain_spells_out_a_newline_in_a_folder_name(tmp_path, zoo):
    zoo("botchan-unigram")
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    folder = "ev\nil"
    done = tokparity("compare", "botchan-unigram", "-c", "one.txt", "-b", "ref", "-o", folder, "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = tokparity("explain", folder, cwd=tmp_path)
    assert shown.returncode == 0 and "ev↵il" in shown.stdout.splitlines()[0], shown.stdout


def test_an_interrupted_run_s_reports_never_say_ok(tmp_path, zoo):
    """Its cases not judged may hold a mismatch: the title says it was interrupted, not ✅. A resume
    refused later leaves these reports, and they claim nothing."""
    import signal
    import subprocess
    import time
    zoo("botchan-unigram")
    (tmp_path / "texts.txt").write_text("".join(f"text {k}\n" for k in range(300)), "utf-8")
    (tmp_path / "slow.py").write_text(
        "import json, sys, time\nfrom tokparity.backends.registry import make_backend\n"
        "from tokparity.zoo import resolve_model\nref = make_backend('ref', resolve_model('botchan-unigram'))\n"
        "for k, line in enumerate(sys.stdin):\n    req = json.loads(line)\n    time.sleep(0 if k < 200 else 60)\n"
        "    ids = ref.encode(req['text'], req['add_special'], req['parse_special'])\n"
        "    print(json.dumps({'id': req['id'], 'ids': ids}), flush=True)\n", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    run = subprocess.Popen([sys.executable, "-P", "-m", "tokparity", "compare", "botchan-unigram", "-c", "texts.txt",
                            "-b", "slow=cmd:{python} slow.py", "-o", "out", "-q"], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    journal = tmp_path / "out" / "cases.jsonl"
    try:
        for _ in range(600):
            if journal.exists() and journal.read_text("utf-8").count("\n") >= 100:
                break
            time.sleep(0.1)
        run.send_signal(signal.SIGINT)
        run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 130
    title = (tmp_path / "out" / "summary.md").read_text("utf-8").splitlines()[0]
    assert "interrupted" in title and "✅" not in title, title
