"""Derived zoo files (models.toml ``derived``): declared, built after fetch into the cache keyed
by source and converter, labelled as derived, never the oracle; each loads in its target library
and agrees with the original library on the corpora, or the difference is a listed, explained one.

Seen on 2026-11-22 over multilingual + edge (1,237 cases): llama-spm and nomic-bert-moe
SentencePiece on the derived .model 0 mismatches; phi-3 7 (all '</s>'); lenml-llama2 llama.cpp
on the derived GGUF 0; botchan-unigram llama.cpp 4 and kyoto-ja-unigram llama.cpp 5 (a literal
U+2581 in the text, a Viterbi tie). botchan-bpe's GGUF has no byte pieces: llama.cpp aborts on
908 of those cases (see test_lossy_conversion_is_recorded), so it is run on botchan lines only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tokparity.errors import TokparityError
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions
from tokparity.run.oracle import oracle_chain
from tokparity.vocab import load_vocab
from tokparity.zoo import derived as derived_mod
from tokparity.zoo import load_manifest, resolve_model, zoo_text
from tokparity.zoo.manifest import _derived

DECLARED = {
    "llama-spm": {"spm_model": "gguf"},
    "phi-3": {"spm_model": "gguf"},
    "nomic-bert-moe": {"spm_model": "gguf"},
    "botchan-unigram": {"gguf": "spm_model", "tokenizer_json": "spm_model"},
    "botchan-bpe": {"gguf": "spm_model", "tokenizer_json": "spm_model"},
    "kyoto-ja-unigram": {"gguf": "spm_model", "tokenizer_json": "spm_model"},
    "gemma-3": {"gguf": "tokenizer_json", "spm_model": "gguf"},
    "lenml-llama2": {"gguf": "tokenizer_json"},
    "rwkv-world": {"gguf": "rwkv_vocab"},
}
# added in #19: more real models, each with a GGUF for llama.cpp (and hf-gguf) to be judged on
DECLARED.update({name: {"gguf": "spm_model"} for name in ("mistral-v1", "mistral-v2", "mistral-v3", "mistral-v7")})
DECLARED.update({name: {"gguf": "tokenizer_json"}
                 for name in ("claude", "deepseek-v3", "gemini", "gpt35turbo", "gpt4o", "gpt-oss")})


def test_manifest_declares_the_derived_files():
    manifest = load_manifest()
    # (the models tokparity trains each derive a GGUF and a tokenizer.json: tests/zoo/test_trained_models.py)
    assert {name: m.derived for name, m in manifest.models.items() if m.derived and m.trained is None} == DECLARED
    for m in manifest.models.values():
        assert not set(m.derived) & set(m.files)  # a derived file never stands in for a pinned one


@pytest.mark.parametrize("entry, message", [
    pytest.param({"spm_model": "from tokenizer_json"}, 'derived.spm_model: write "from gguf"', id="bad-direction"),
    pytest.param({"golden_out": "from gguf"}, "cannot derive a 'golden_out' file", id="bad-role"),
    pytest.param({"gguf": "from spm_model"}, "already has a pinned gguf", id="shadows-pinned"),
    pytest.param({"tokenizer_json": "from spm_model"}, "source 'spm_model' is neither pinned nor derived before",
                 id="no-source"),
    pytest.param({"spm_model": "gguf"}, "write \"from gguf\", not 'gguf'", id="no-from"),
])
def test_bad_declarations_name_the_key(entry, message):
    pinned = load_manifest().models["llama-spm"].files
    with pytest.raises(TokparityError, match=r"models.toml \[models.m\] derived\.") as e:
        _derived("m", entry, pinned)
    assert message in str(e.value)


@pytest.fixture
def fresh_derived_cache(tmp_path, monkeypatch, zoo):
    """A cache holding the fetched pinned files (linked) and no derived file."""
    for name in ("botchan-unigram", "gemma-3"):
        zoo(name)
    from tokparity.zoo import cache_dir
    (tmp_path / "zoo").symlink_to(cache_dir() / "zoo", target_is_directory=True)
    monkeypatch.setenv("TOKPARITY_CACHE", str(tmp_path))
    return tmp_path


def test_derived_files_are_built_keyed_and_labelled(fresh_derived_cache, monkeypatch):
    cache = fresh_derived_cache
    unbuilt = resolve_model("botchan-unigram", fetch=False)
    assert set(unbuilt.files) == {"spm_model"}
    assert unbuilt.missing == {r: "derived from spm_model, not built yet (tokparity zoo fetch botchan-unigram)"
                               for r in ("gguf", "tokenizer_json")}

    model = resolve_model("botchan-unigram")
    assert model.missing == {}
    assert set(model.derived) == {"gguf", "tokenizer_json"} and set(model.original_files) == {"spm_model"}
    assert model.primary[0] == "spm_model"  # the original stands for the model
    gguf = model.files["gguf"]
    assert gguf.parent.parent == cache / "derived" / "botchan-unigram" and gguf.name == "botchan-unigram.gguf"
    sidecar = json.loads((gguf.parent / "derived.json").read_text("utf-8"))
    assert (sidecar["from_role"], sidecar["source_id"]) == ("spm_model", load_manifest().models[
        "botchan-unigram"].files["spm_model"].sha256)
    assert sidecar["warnings"] == list(model.derived["gguf"].warnings)
    assert any(w.startswith("add_bos_token:") for w in sidecar["warnings"])  # what the .model cannot say

    # Built once: a second resolve reuses the files and builds nothing.
    log: list[str] = []
    again = derived_mod.derived_files(load_manifest().models["botchan-unigram"], log=log.append)
    assert again[0] == {r: model.files[r] for r in ("gguf", "tokenizer_json")} and log == []

    # A changed converter builds a new file beside the old one, never reuses it.
    monkeypatch.setattr(derived_mod, "converter_version", lambda role: "0.0.0+changed/none")
    rebuilt = resolve_model("botchan-unigram")
    assert rebuilt.files["gguf"] != gguf and gguf.is_file()
    assert rebuilt.derived["gguf"].converter == "0.0.0+changed/none"


def test_a_derived_file_that_cannot_be_built_is_missing_not_fatal(fresh_derived_cache, monkeypatch):
    import tokparity.convert

    def broken(src, to, out):
        raise TokparityError(f"{src}: converter says no")

    monkeypatch.setattr(tokparity.convert, "convert", broken)
    model = resolve_model("botchan-unigram")
    assert set(model.files) == {"spm_model"} and model.derived == {}
    assert model.missing["gguf"].startswith("derived from spm_model, could not be built: ")
    assert model.missing["gguf"].endswith("botchan_en_unigram_1000.model: converter says no")
    assert not list((fresh_derived_cache / "derived" / "botchan-unigram").glob("gguf-*"))


@pytest.mark.parametrize("name, chain", [
    pytest.param("llama-spm", ["golden", "llama.cpp"], id="llama-spm"),
    pytest.param("nomic-bert-moe", ["llama.cpp"], id="nomic-bert-moe"),
    pytest.param("botchan-unigram", ["sentencepiece"], id="botchan-unigram"),
    pytest.param("gemma-3", ["hf"], id="gemma-3"),
    pytest.param("lenml-llama2", ["hf"], id="lenml-llama2"),
])
def test_the_oracle_is_the_original_library(name, chain, zoo):
    model = zoo(name)
    assert model.derived  # it has derived files, and still:
    assert oracle_chain(model, CompareOptions()) == chain


def test_zoo_list_and_inspect_say_derived(zoo):
    zoo("botchan-bpe")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    listed = subprocess.run([sys.executable, "-m", "tokparity.cli", "zoo", "list", "--json"], capture_output=True,
                            text=True, timeout=120, env=env)
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "botchan-bpe")
    assert row["files"] == ["spm_model"]  # the originals only
    assert {role: (d["from"], d["built"]) for role, d in row["derived"].items()} == {
        "gguf": ("spm_model", True), "tokenizer_json": ("spm_model", True)}
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "inspect", "botchan-bpe"], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "  [spm_model]\n" in proc.stdout
    assert "  [gguf] DERIVED: built by tokparity convert " in proc.stdout
    assert "not carried    byte_fallback: the vocabulary has no <0xNN> byte pieces; llama.cpp's SPM ('llama') " \
           "tokenizer aborts the whole process" in proc.stdout


def test_lossy_conversion_is_recorded(zoo):
    """botchan-bpe's .model has no byte pieces: its GGUF is made anyway, and says so."""
    model = zoo("botchan-bpe")
    fields = [w.split(":", 1)[0] for w in model.derived["gguf"].warnings]
    assert fields == ["add_bos_token", "precompiled_charsmap", "remove_extra_whitespaces", "byte_fallback"]


# --- agreement with the original library on the corpora -------------------------------------------

def _mismatches(name: str, backend: str, corpora=("multilingual", "edge")):
    results = run_compare([name], list(corpora), [backend], CompareOptions(explicit_backends=True))
    run = next(r for r in results.runs if r.backend == backend)
    return run, [m for m in results.mismatches if m.backend == backend]


U2581 = lambda m: "\u2581" in m.text  # noqa: E731  SentencePiece reads a literal ▁ as whitespace
VITERBI_TIE = lambda m: sorted(m.oracle_ids) == sorted(m.backend_ids)  # noqa: E731  same pieces, same score
# model, derived backend, cases expected to differ, why (a test every differing case must pass)
AGREEMENT = [
    ("llama-spm", "sentencepiece", 0, None),
    ("nomic-bert-moe", "sentencepiece", 0, None),
    # Phi-3's GGUF types '</s>' user-defined; llama.cpp treats it as end-of-generation (special),
    # SentencePiece matches user-defined pieces in text.
    ("phi-3", "sentencepiece", 7, lambda m: "</s>" in m.text),
    ("lenml-llama2", "llama.cpp", 0, None),
    ("botchan-unigram", "llama.cpp", 4, U2581),
    ("kyoto-ja-unigram", "llama.cpp", 5, lambda m: U2581(m) or VITERBI_TIE(m)),
]


@pytest.mark.parametrize("name, backend, expected, why", [pytest.param(*a, id=f"{a[0]}-{a[1]}") for a in AGREEMENT])
def test_derived_file_agrees_with_the_original(name, backend, expected, why, zoo):
    zoo(name)
    run, mismatches = _mismatches(name, backend)
    assert run.cases == 1237 or run.oracle.startswith("golden")
    unexplained = [(m.case_id, m.text, m.oracle_pieces, m.backend_pieces) for m in mismatches if not why or not why(m)]
    assert not unexplained, unexplained[:3]
    assert run.mismatches == expected


def test_botchan_bpe_gguf_agrees_where_llama_cpp_can_run(zoo, tmp_path):
    """llama.cpp aborts on characters the byte-less vocabulary lacks; on Botchan's own lines
    (which its 1,000 pieces cover) it meets SentencePiece, except where SentencePiece's normalizer
    (nmt_nfkc, whitespace collapsing), dropped by the conversion, changes the text."""
    pieces = set(load_vocab(zoo("botchan-bpe").files["spm_model"]).tokens)
    lines = [ln for ln in zoo_text("botchan").read_text("utf-8").splitlines()
             if ln.strip() and all(c in pieces for c in ln.replace(" ", "\u2581"))][:200]
    corpus = tmp_path / "botchan.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"botchan-{i}", "text": t}) + "\n" for i, t in enumerate(lines)))
    run, mismatches = _mismatches("botchan-bpe", "llama.cpp", [str(corpus)])
    assert run.cases == 200
    assert all(m.cls != "crash" for m in mismatches)
    import unicodedata
    assert all(unicodedata.normalize("NFKC", m.text) != m.text or "  " in m.text or m.text != m.text.strip()
               for m in mismatches), [(m.text, m.oracle_pieces, m.backend_pieces) for m in mismatches][:3]
    assert run.mismatches < 20


def test_derived_roles_survive_the_trip_to_an_isolated_child(zoo):
    from tokparity.backends.isolated import model_from_json, model_to_json

    model = zoo("gemma-3")
    child = model_from_json(json.loads(json.dumps(model_to_json(model))))
    assert child.derived == model.derived and child.files == model.files
    assert child.primary[0] == "tokenizer_json"  # ref in a child reads the original too
