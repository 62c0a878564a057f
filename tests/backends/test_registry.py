"""The registry: names, lazy imports, and what a user is told when a name or a library is wrong."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tokparity.backends import registry
from tokparity.backends.isolated import IsolatedBackend
from tokparity.backends.llamacpp import LlamaCppBackend
from tokparity.backends.registry import known_backends, make_backend
from tokparity.errors import BackendUnavailable, MissingDependency, TokparityError, UnknownBackend
from tokparity.zoo import resolve_model


def test_known_backends():
    assert known_backends() == ["ref", "llama.cpp", "sentencepiece", "hf", "tiktoken", "hf-gguf", "golden",
                                "mistral-common", "rwkv", "llama-server", "llama.cpp-jinja", "cmd:COMMAND",
                                "py:MODULE:CALLABLE", "http:SERVER@[HOST:]PORT"]


def test_unknown_backend_names_the_known_ones(zoo):
    with pytest.raises(UnknownBackend) as e:
        make_backend("llamacpp", zoo("llama-spm"))
    assert str(e.value) == ("unknown backend 'llamacpp'; known: ref, llama.cpp, sentencepiece, hf, tiktoken, hf-gguf, "
                            "golden, mistral-common, rwkv, llama-server, llama.cpp-jinja, cmd:COMMAND, py:MODULE:CALLABLE, "
                            "http:SERVER@[HOST:]PORT")


@pytest.mark.parametrize("name, message", [
    pytest.param("llama.cpp", "backend 'llama.cpp' needs llama-cpp-python (pip install 'tokparity[llama]')",
                 id="llama"),
    pytest.param("sentencepiece", "backend 'sentencepiece' needs sentencepiece (pip install 'tokparity[spm]')",
                 id="spm"),
    pytest.param("hf", "backend 'hf' needs tokenizers (pip install 'tokparity[hf]')", id="hf"),
    pytest.param("hf-gguf", "backend 'hf-gguf' needs transformers (pip install 'tokparity[hf]')", id="hf-gguf"),
])
def test_missing_library_says_what_to_install(zoo, monkeypatch, name, message):
    missing = registry.BUILTIN[name].module
    real = registry.importlib.util.find_spec
    monkeypatch.setattr(registry.importlib.util, "find_spec", lambda m, *a: None if m == missing else real(m, *a))
    assert registry.backend_available(name) is False
    with pytest.raises(BackendUnavailable) as e:
        make_backend(name, zoo("llama-bpe"))
    assert str(e.value) == message
    assert isinstance(e.value, MissingDependency)  # the CLI's exit status 2


def test_backend_module_not_written_yet(zoo, monkeypatch):
    monkeypatch.setitem(registry.BUILTIN, "ref", registry.BackendSpec("ref", "tokparity.backends.nope:RefBackend"))
    with pytest.raises(BackendUnavailable, match=r"backend 'ref' is not available in this tokparity: its module "
                                                 r"tokparity.backends.nope does not exist yet"):
        make_backend("ref", zoo("llama-spm"))


def test_importing_the_registry_imports_no_library():
    code = ("import sys, tokparity.backends.registry as r; r.known_backends(); "
            "print([m for m in ('llama_cpp', 'sentencepiece', 'tokenizers', 'transformers', 'tokparity.backends.ref') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ref_is_registered(backend):
    assert backend("ref", "llama-spm").encode("Hello world") == [15043, 3186]


def test_file_the_backend_needs_is_missing(zoo):
    # baichuan: an SPM GGUF with no derived .model (llama-spm has one, see models.toml `derived`)
    with pytest.raises(TokparityError, match=r"model baichuan: the sentencepiece backend needs a SentencePiece "
                                             r"\.model file, and it has none \(it has: gguf\)"):
        make_backend("sentencepiece", zoo("baichuan"))


def test_unknown_option(zoo):
    with pytest.raises(TokparityError, match=r"llama.cpp backend: unknown option\(s\) colour"):
        make_backend("llama.cpp", zoo("llama-spm"), colour="red")


def test_llamacpp_isolation_is_auto(zoo):
    """Zoo files (sha256-pinned) run in process; any other file in a child process."""
    in_process = make_backend("llama.cpp", zoo("llama-spm"))
    local = make_backend("llama.cpp", resolve_model(str(zoo("llama-spm").files["gguf"])))
    forced = make_backend("llama.cpp", zoo("llama-spm"), isolate=True)
    try:
        assert type(in_process) is LlamaCppBackend
        assert type(local) is IsolatedBackend and local.name == "llama.cpp"
        assert type(forced) is IsolatedBackend
        assert local.encode("Hello world") == forced.encode("Hello world") == in_process.encode("Hello world")
    finally:
        for b in (in_process, local, forced):
            b.close()


@pytest.mark.parametrize("name, message", [
    pytest.param("cmd:", r"cmd: needs a command after the colon", id="cmd-empty"),
    pytest.param("py:just_a_module", r"py:just_a_module: expected py:MODULE:CALLABLE", id="py-no-callable"),
    pytest.param("cmd:python3 'unbalanced", r"cannot split the command \(No closing quotation\)", id="cmd-quotes"),
])
def test_bad_prefixed_names(zoo, name, message):
    with pytest.raises(TokparityError, match=message):
        make_backend(name, zoo("llama-spm"))
