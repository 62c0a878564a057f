"""Models tokparity trains (models.toml ``trained``): one SentencePiece model per trainer flag that
changes encoding, unigram and BPE, trained on the pinned Botchan text at fetch time.

Training is deterministic (the same bytes twice, and across processes: the cached sidecar's
sha256); the flags land in the .model's trainer_spec / normalizer_spec; the reference agrees with
SentencePiece, the training library, on every model; llama.cpp (derived GGUF) and tokenizers
(derived tokenizer.json) differ only where tokparity's known list says, each with a cause.

Seen on 2026-11-23: the 26 models train in 11 s in all (unigram 0.5-2.5 s each, BPE < 0.1 s);
ref 0 mismatches against SentencePiece on every model over edge + multilingual + emoji +
llama.cpp-tests (6,313 cases each).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.errors import TokparityError
from tokparity.zoo import load_manifest, resolve_model, zoo_text
from tokparity.zoo.manifest import _trained
from tokparity.zoo.trained import train_bytes, trained_file

ROOT = Path(__file__).resolve().parents[2]
TRAINED = [name for name, m in load_manifest().models.items() if m.trained is not None]
# The flags issue 19 asks for, each with the value its model sets.
MATRIX = {
    "byte-fallback": {"byte_fallback": True}, "split-digits": {"split_digits": True},
    "ws-suffix": {"treat_whitespace_as_suffix": True}, "no-dummy-prefix": {"add_dummy_prefix": False},
    "keep-extra-ws": {"remove_extra_whitespaces": False}, "ws-only-pieces": {"allow_whitespace_only_pieces": True},
    "no-split-by-ws": {"split_by_whitespace": False}, "no-split-by-script": {"split_by_unicode_script": False},
    "user-symbols": {"user_defined_symbols": ["<sep>", "<mask>", "Botchan", "ing"]},
    "control-symbols": {"control_symbols": ["<sep>", "<cls>"]},
    "nmt-nfkc": {"normalization_rule_name": "nmt_nfkc"}, "nfkc-cf": {"normalization_rule_name": "nfkc_cf"},
    "identity": {"normalization_rule_name": "identity"},
}
NORMALIZER_FIELDS = {"add_dummy_prefix": "add_dummy_prefix", "remove_extra_whitespaces": "remove_extra_whitespaces",
                     "normalization_rule_name": "name"}


def test_the_matrix_is_declared_for_unigram_and_bpe():
    manifest = load_manifest()
    for model_type in ("unigram", "bpe"):
        for flag, options in MATRIX.items():
            model = manifest.models[f"spm-{model_type}-{flag}"]
            assert model.trained is not None and model.trained.text == "botchan"
            assert model.trained.options["model_type"] == model_type
            assert options.items() <= model.trained.options.items()
            assert model.derived == {"gguf": "spm_model", "tokenizer_json": "spm_model"}
            assert model.files == {}  # nothing pinned: the trained .model is its original


@pytest.mark.parametrize("entry, message", [
    pytest.param({"text": "botchan", "num_threads": 4}, "'num_threads' is not a trainer flag tokparity passes on "
                 "(tokparity fixes it", id="fixed-flag"),
    pytest.param({"text": "botchan", "vocab_sise": 10}, "'vocab_sise' is not a trainer flag", id="typo"),
    pytest.param({"text": "kyoto"}, "trained.text: 'kyoto' is not a [texts] entry", id="unknown-text"),
    pytest.param({"text": "botchan", "byte_fallback": "yes"}, "byte_fallback: write a bool", id="bad-type"),
    pytest.param({"text": "botchan", "model_type": "char"}, "'char' is not one of unigram, bpe", id="bad-choice"),
])
def test_bad_trained_entries_name_the_key(entry, message):
    with pytest.raises(TokparityError, match=r"models.toml \[models.m\] trained") as e:
        _trained("m", entry, {}, load_manifest().texts)
    assert message in str(e.value)


@pytest.fixture(scope="module")
def trained_models():
    """name -> ModelFiles of every trained model, trained (and converted) once into the cache."""
    return {name: resolve_model(name) for name in TRAINED}


@pytest.mark.parametrize("name", ["spm-unigram-ws-only-pieces", "spm-bpe-user-symbols"])
def test_training_is_deterministic(name, trained_models):
    """Twice in this process and once in the process that filled the cache: the same bytes."""
    spec = load_manifest().models[name].trained
    text = zoo_text("botchan")
    first, second = train_bytes(spec, text), train_bytes(spec, text)
    assert hashlib.sha256(first).hexdigest() == hashlib.sha256(second).hexdigest()
    path, training, why = trained_file(load_manifest().models[name], build=False)
    assert why is None and training is not None
    assert hashlib.sha256(first).hexdigest() == training.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    sidecar = json.loads((path.parent / "trained.json").read_text("utf-8"))
    assert sidecar["options"]["num_threads"] == 1 and sidecar["sha256"] == training.sha256
    assert sidecar["seconds"] >= 0 and sidecar["library"].startswith("sentencepiece-")


def test_the_flags_are_in_the_trained_models(trained_models):
    from sentencepiece import sentencepiece_model_pb2 as pb

    for name, model in trained_models.items():
        assert model.trained is not None and "spm_model" in model.original_files, name
        assert set(model.derived) == {"gguf", "tokenizer_json"}, name
        proto = pb.ModelProto()
        proto.ParseFromString(model.files["spm_model"].read_bytes())
        assert len(proto.pieces) == load_manifest().models[name].tokens, name
        for flag, value in load_manifest().models[name].trained.options.items():
            if flag in NORMALIZER_FIELDS:
                got = getattr(proto.normalizer_spec, NORMALIZER_FIELDS[flag])
            else:
                got = getattr(proto.trainer_spec, flag)
                got = {1: "unigram", 2: "bpe"}[got] if flag == "model_type" else got
            assert (list(got) if isinstance(value, list) else got) == value, (name, flag)
        assert proto.trainer_spec.num_threads == 1 and not proto.trainer_spec.input, name  # no path in the file


def test_ref_agrees_with_sentencepiece_on_every_trained_model(trained_models):
    from tokparity.backends.registry import make_backend
    from tokparity.corpus import load_corpus

    texts = [c.text for corpus in ("edge", "multilingual", "llama.cpp-tests") for c in load_corpus(corpus)]
    emoji = [c.text for c in load_corpus("emoji")]
    for name, model in trained_models.items():
        ref, spm = make_backend("ref", model), make_backend("sentencepiece", model)
        cases = texts + (emoji if "byte-fallback" in name else [])
        differ = [t for t in cases if ref.encode(t) != spm.encode(t)]
        assert differ == [], (name, differ[:3])


def _compare(tmp_path, *args):
    out = tmp_path / "report"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", *args, "-o", str(out), "-q"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    summary = json.loads((out / "summary.json").read_text("utf-8")) if (out / "summary.json").is_file() else {}
    return proc, summary


def test_derived_backends_differ_only_as_known_with_their_cause(tmp_path, trained_models):
    """llama.cpp on two flag models' GGUFs: every difference is a known one (exit 0); without the
    built-in list each is unexplained (exit 1) and the diagnosis names its cause."""
    models = ["spm-unigram-byte-fallback", "spm-unigram-no-dummy-prefix"]
    args = [*models, "-b", "llama.cpp", "-c", "edge"]
    proc, summary = _compare(tmp_path / "known", *args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = {r["model"]: r for r in summary["runs"] if r["backend"] == "llama.cpp"}
    assert all(runs[m]["mismatches"] > 0 and runs[m]["unexplained"] == 0 for m in models), runs
    assert {"trained-llama-cpp-ugm-no-byte-fallback", "trained-llama-cpp-ugm-prefix-with-merge-spaces"} <= set(
        summary["known"]["used"])

    proc, summary = _compare(tmp_path / "bare", *args, "--no-builtin-known")
    assert proc.returncode == 1, proc.stderr[-2000:]
    runs = {r["model"]: r for r in summary["runs"] if r["backend"] == "llama.cpp"}
    assert runs["spm-unigram-byte-fallback"]["root_cause"]["cause"] == "bytes.fallback"
    assert runs["spm-unigram-no-dummy-prefix"]["root_cause"]["cause"] == "whitespace.collapse"
    assert all(runs[m]["unexplained"] == runs[m]["mismatches"] for m in models)
