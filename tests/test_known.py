"""Known divergences: listed cases do not fail a run, unlisted ones do, stale entries are reported.

Built on a real upstream difference: transformers' GGUF tokenizer converter (hf-gguf) drops the
extra '▁' that SentencePiece and llama.cpp give a text starting with a space, on llama-spm.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tokparity.errors import TokparityError
from tokparity.run.known import parse_known

ENTRY = '''
[[divergence]]
id = "hf-gguf-spm-leading-space"
models = ["llama-spm"]
backends = ["hf-gguf"]
classes = ["space-prefix"]
text = '^\\s'
reason = "transformers' GGUF converter builds a Metaspace pre-tokenizer that does not add a second '▁' before a leading space"
upstream = "transformers convert_gguf_tokenizer (GGUFLlamaConverter)"
'''
STALE = '''
[[divergence]]
id = "ref-never-disagrees"
models = ["llama-spm"]
backends = ["hf-gguf"]
classes = ["merge-order"]
reason = "a made-up entry that matches nothing"
upstream = "none"
'''


def compare(tmp_path, *extra):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "compare", "llama-spm", "-c", "llama.cpp-tests",
                           "-b", "hf-gguf", "--no-builtin-known", "-q", "-o", str(out), *extra],
                          capture_output=True, text=True, timeout=600)
    return proc, json.loads((out / "summary.json").read_text("utf-8")) if (out / "summary.json").exists() else None


@pytest.fixture(scope="module")
def llama_spm(zoo):
    return zoo("llama-spm")


def test_unlisted_divergence_fails_the_run(llama_spm, tmp_path):
    proc, summary = compare(tmp_path)
    assert proc.returncode == 1, proc.stderr
    run = next(r for r in summary["runs"] if r["backend"] == "hf-gguf")
    assert run["classes"] == {"space-prefix": 15}
    assert run["unexplained"] == 15
    assert "space-prefix 15" in proc.stdout


def test_listed_divergence_is_known_and_stale_entry_reported(llama_spm, tmp_path):
    known = tmp_path / "known.toml"
    known.write_text(ENTRY + STALE, "utf-8")
    proc, summary = compare(tmp_path, "--known", str(known))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = next(r for r in summary["runs"] if r["backend"] == "hf-gguf")
    assert (run["mismatches"], run["unexplained"]) == (15, 0)
    assert summary["known"]["used"] == {"hf-gguf-spm-leading-space": 15}
    assert [e["id"] for e in summary["known"]["stale"]] == ["ref-never-disagrees"]
    assert "stale known divergence ref-never-disagrees" in proc.stdout


def test_known_file_errors_are_one_line():
    with pytest.raises(TokparityError, match=r"k.toml: divergence #1 lacks classes, reason, upstream"):
        parse_known('[[divergence]]\nid = "x"\nmodels = ["a"]\nbackends = ["b"]\n', "k.toml")
    with pytest.raises(TokparityError, match=r"k.toml: invalid TOML"):
        parse_known("[[divergence", "k.toml")


def test_an_id_given_twice_names_both_files(tmp_path):
    """Two --known files with one id: the line names both files, not "known divergences" alone."""
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text(ENTRY, "utf-8")
    second.write_text(ENTRY, "utf-8")
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "compare", "llama-spm", "-b", "ref", "--known",
                           str(first), "--known", str(second), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"{first} and {second}: known divergence id 'hf-gguf-spm-leading-space' is given twice" in proc.stderr


def test_the_shipped_list_is_well_formed():
    """Every shipped entry names classes the classifier gives, zoo models and known backends,
    and says why and where upstream."""
    from fnmatch import fnmatchcase

    from tokparity.diff.classify import CLASSES
    from tokparity.run.known import load_known
    from tokparity.zoo import load_manifest

    entries = load_known().entries
    assert len(entries) >= 10
    zoo_models = list(load_manifest().models)
    for e in entries:
        assert set(e.classes) <= set(CLASSES), e.id
        assert all(any(fnmatchcase(m, p) for m in zoo_models) for p in e.models), e.id
        assert set(e.backends) <= {"ref", "llama.cpp", "sentencepiece", "hf", "hf-gguf", "golden", "template:parts",
                                   "mistral-common", "*"}, e.id
        assert len(e.reason) > 80 and e.upstream, e.id


def test_the_shipped_list_explains_transformers_gguf_on_llama_spm(llama_spm, tmp_path):
    """The shipped list covers hf-gguf's leading-space cases on llama-spm (exit 0, all known);
    without it the same run fails with that class."""
    def run_edge(*extra):
        out = tmp_path / str(len(extra))
        proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "compare", "llama-spm", "-c", "edge",
                               "-b", "hf-gguf", "-q", "-o", str(out), *extra], capture_output=True, text=True,
                              timeout=600)
        return proc, json.loads((out / "summary.json").read_text("utf-8"))

    proc, summary = run_edge()
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    (run,) = [r for r in summary["runs"] if r["backend"] == "hf-gguf"]
    assert run["mismatches"] > 100 and run["unexplained"] == 0
    assert summary["known"]["used"]["hf-gguf-metaspace-leading-space"] == run["mismatches"]
    proc, summary = run_edge("--no-builtin-known")
    assert proc.returncode == 1
    (bare,) = [r for r in summary["runs"] if r["backend"] == "hf-gguf"]
    assert bare["unexplained"] == run["mismatches"]
    assert bare["classes"]["space-prefix"] > 100


def test_a_decode_entry_is_stale_only_in_a_run_that_decoded():
    """tokenizers-raw-decode-no-cleanup (a decode-cleanup entry: about the decode op) cannot match
    in a compare run without --ops decode, so such a run does not call it stale; a run that
    decodes and never meets it does."""
    from tokparity.run.known import load_known

    without = load_known(None)
    without.note_run("llama-bpe", "hf")
    without.note_run("llama-bpe", "hf-gguf")
    assert "tokenizers-raw-decode-no-cleanup" not in [e.id for e in without.stale()]
    assert "hf-gguf-no-ignore-merges" in [e.id for e in without.stale()]  # an encode entry still is
    decoding = load_known(None)
    decoding.note_run("llama-bpe", "hf", "decode")
    assert "tokenizers-raw-decode-no-cleanup" in [e.id for e in decoding.stale()]


def test_an_entry_can_ask_for_words_in_the_evidence():
    from tokparity.records import Mismatch

    (entry,) = parse_known('[[divergence]]\nid = "x"\nmodels = ["m"]\nbackends = ["b"]\nclasses = ["decode-roundtrip"]\n'
                           'evidence = "unk_surface"\nreason = "r"\nupstream = "u"\n', "k.toml")
    base = dict(model="m", corpus="c", case_id="1", tags={}, oracle="o", backend="b", cls="decode-roundtrip",
                stage="decode", first_diff=0, text="t", oracle_ids=[], backend_ids=[], oracle_pieces=[],
                backend_pieces=[], op="decode")
    assert entry.matches(Mismatch.of(**base, evidence="decodes as ' ⁇ ' (SentencePiece's unk_surface)"))
    assert not entry.matches(Mismatch.of(**base, evidence="differ only in leading spaces"))
    with pytest.raises(TokparityError, match=r"k.toml: divergence 'x': bad evidence regex"):
        parse_known('[[divergence]]\nid = "x"\nmodels = ["m"]\nbackends = ["b"]\nclasses = ["c"]\nevidence = "("\n'
                    'reason = "r"\nupstream = "u"\n', "k.toml")
