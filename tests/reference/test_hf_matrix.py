"""ref == Hugging Face tokenizers on every variant of the tokenizer.json matrix (hf_matrix.py):
each component option over real vocabularies, every file written by tokenizers itself.

One test per variant, named by it (``unigram-botchan/metaspace-first-nosplit``), so a failure
names the component and option; its message is the variant's line: how many encodes differ, the
first differing text with both id lists, or the reference's refusal. Each variant's file is built
once into a session folder; each base vocabulary is read once per session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hf_matrix import LARGE, judge, variants

import tokparity


@pytest.fixture(scope="session")
def matrix_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hf-matrix")


@pytest.mark.parametrize("variant", [
    pytest.param(v, id=v.name, marks=[pytest.mark.slow] if v.base in LARGE else []) for v in variants()])
def test_ref_agrees_with_tokenizers(variant, matrix_dir):
    verdict = judge(variant, matrix_dir)
    assert verdict.error is None, verdict.line()
    assert verdict.encodes == len(variant.texts) * len(variant.modes)
    assert verdict.mismatches == 0, verdict.line()


def test_cli_prints_a_line_a_variant_and_the_total(tmp_path):
    """The command line judges the variants it is asked for, keeps their files, and says so."""
    tree = str(Path(tokparity.__file__).resolve().parents[1])  # the tokparity this session tests, in the child too
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")]))}
    script = Path(__file__).with_name("hf_matrix.py")
    run = subprocess.run([sys.executable, str(script), "--only", "unigram-botchan/metaspace-first",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=120, env=env)
    lines = run.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:-1]] == [["ok", "unigram-botchan/metaspace-first-split"],
                                                         ["ok", "unigram-botchan/metaspace-first-nosplit"]], run.stdout
    assert lines[-1].startswith("total: 2/2 variants agree (0 fail; 0 of "), run.stdout
    assert run.returncode == 0, run.stderr
    assert sorted(p.parent.name for p in tmp_path.glob("*/tokenizer.json")) == [
        "unigram-botchan__metaspace-first-nosplit", "unigram-botchan__metaspace-first-split"]
