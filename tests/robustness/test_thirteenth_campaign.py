"""What the thirteenth hostile campaign broke (a helper told only docs/robustness.md's promises, on
007e881), each as a user or an attacker does it. Each test failed before its fix.

- ``$GITHUB_STEP_SUMMARY`` appended to an engine's data file named through ``$(pwd)``;
- ``--junit`` replaced a file that only begins with ``<testsuites>``;
- a journal key that is a FIFO hung the run (a device would fill the memory);
- a ``py:`` name that is no module's printed tokparity's own traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from cli_runs import one_error, tokparity

ENGINES = Path(__file__).resolve().parents[2] / "examples" / "engines"


@pytest.mark.parametrize("spelling", ["$(pwd)/data.md", "`pwd`/data.md"])
def test_the_step_summary_never_appends_to_a_file_the_engine_names_through_pwd(tmp_path, zoo, spelling):
    model = zoo("llama-spm").files["gguf"]
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    (tmp_path / "data.md").write_text("ENGINE CONFIG v1\n", "utf-8")
    engine = f"cmd:sh -c 'cat {spelling} >/dev/null; exec {sys.executable} {ENGINES / 'greedy_engine.py'} {model}'"
    done = tokparity("compare", str(model), "-c", "one.txt", "-b", engine, "-o", "out", "-q", cwd=tmp_path,
                     env={"GITHUB_STEP_SUMMARY": str(tmp_path / "data.md")})
    assert "GITHUB_STEP_SUMMARY" in one_error(done)
    assert (tmp_path / "data.md").read_text("utf-8") == "ENGINE CONFIG v1\n"


@pytest.mark.parametrize("text", ["<testsuites>\nMy notes, not XML at all & < >\n", "<testsuite>"])
def test_junit_refuses_a_file_that_is_no_whole_xml_document(tmp_path, zoo, text):
    zoo("botchan-unigram")
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    (tmp_path / "notes").write_text(text, "utf-8")
    done = tokparity("compare", "botchan-unigram", "-c", "one.txt", "-b", "ref", "-o", "out", "--junit", "notes",
                     cwd=tmp_path)
    assert "--junit" in one_error(done) and (tmp_path / "notes").read_text("utf-8") == text


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_journal_key_that_is_no_file_is_refused_at_once(tmp_path, zoo, kind):
    model = zoo("llama-spm").files["gguf"]
    cache = tmp_path / "cache"
    cache.mkdir()
    os.symlink(Path(os.environ.get("TOKPARITY_CACHE", Path.home() / ".cache" / "tokparity")) / "zoo", cache / "zoo")
    key = cache / "journal-key"
    os.mkfifo(key) if kind == "fifo" else os.symlink("/dev/zero", key)
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    done = tokparity("compare", str(model), "-c", "one.txt", "-b", f"cmd:{{python}} {ENGINES / 'greedy_engine.py'} {{gguf}}",
                     "-o", "out", "-q", cwd=tmp_path, env={"TOKPARITY_CACHE": str(cache)}, timeout=60)
    assert "not a journal key tokparity made" in one_error(done)


@pytest.mark.parametrize("spec", ["py:.x:f", "py:..:f", "py:eng:encode.__class__"])
def test_a_py_name_that_is_no_module_s_is_one_line(tmp_path, zoo, spec):
    zoo("botchan-unigram")
    line = one_error(tokparity("encode", "-b", spec, "botchan-unigram", "hi", cwd=tmp_path))
    assert "expected py:MODULE:CALLABLE" in line and "Traceback" not in line and ".py\", line" not in line
