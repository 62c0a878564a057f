"""The decode settings a run can force (``compare --clean-up-spaces on|off --spaces-between-specials``):
the reference gives them, each library declares the ones it has and is not asked the others, the
decoder falls back to the reference where the oracle's library lacks one (and says so), and an
engine that takes a setting and ignores it is named by the cause that reproduces it, its twin agreeing.
The engines are transformers-based ``py:`` engines (tests/engines/hf_decode_engine.py) and
transformers.js, a third-party decoder that takes clean_up_tokenization_spaces."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from tokparity.backends.registry import make_backend
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions
from tokparity.vocab import load_vocab

sys.path.insert(0, str(Path(__file__).parents[1] / "diagnose"))
from thirdparty import node, node_engines  # noqa: E402, F401  (tests/diagnose/thirdparty.py; node_engines: a fixture)

sys.path.pop(0)

ENGINE = Path(__file__).parents[1] / "engines" / "hf_decode_engine.py"
CLEAN_ON, CLEAN_OFF = DecodeSettings(clean_up=True), DecodeSettings(clean_up=False)


def test_the_reference_gives_every_setting(zoo):
    """transformers' clean-up chain forced on a tokenizer.json ('x != y , don ' t' -> "x!= y, don't"),
    llama.cpp's clean_spaces forced off on the GGUF of the same model (which turns it on), and
    special tokens spaced apart as vLLM's detokenizer does, a skipped one parting nothing."""
    model = zoo("llama-bpe")
    hf = RefTokenizer(load_vocab(model.path("tokenizer_json")))
    ids = hf.encode("x != y , don ' t")
    assert hf.decode_as(ids, DecodeSettings()) == hf.decode_as(ids, CLEAN_OFF) == "x != y , don ' t"
    assert hf.decode_as(ids, CLEAN_ON) == "x!= y, don't"
    gguf = RefTokenizer(load_vocab(model.path("gguf")))
    assert gguf.decode_as(ids, DecodeSettings()) == "x!= y, don't"  # (llama.cpp cleans this vocabulary)
    assert gguf.decode_as(ids, CLEAN_OFF) == "x != y , don ' t"
    # forced on, transformers' chain whatever the file (llama.cpp's passes keep " n't": 'I do n't')
    i_do_not = gguf.encode("I do n't know")
    assert gguf.decode_as(i_do_not, CLEAN_ON) == hf.decode_as(i_do_not, CLEAN_ON) == "I don't know"
    assert gguf.decode_as(i_do_not, DecodeSettings()) == "I do n't know"
    bos = hf.vocab.id_of("<|begin_of_text|>")
    hello, world = hf.encode("Hello"), hf.encode(" world")
    spaced = DecodeSettings(spaces_between_specials=True)
    assert hf.decode_as(hello + [bos] + world, DecodeSettings()) == "Hello<|begin_of_text|> world"
    assert hf.decode_as(hello + [bos] + world, spaced) == "Hello <|begin_of_text|>  world"
    assert hf.decode_as(hello + [bos] + world, DecodeSettings(True, None, True)) == "Hello world"


def test_libraries_declare_the_settings_they_have(zoo):
    """What each library can be asked, and that the declarations are true of the libraries:
    tokenizers has no clean-up (so 'off' is its one behaviour), transformers 5.23 takes
    clean_up_tokenization_spaces=True and ignores it on a BPE model (tokenization_utils_tokenizers.py
    ``_decode``: 'destructive for BPE'), llama.cpp's clean_spaces is the vocabulary's (no switch)."""
    model = zoo("llama-bpe")
    tokenizers_backend = make_backend("hf", model)
    transformers_backend = make_backend("hf", model, loader="transformers")
    llama = make_backend("llama.cpp", model)
    try:
        assert tokenizers_backend.gives(CLEAN_OFF) and not tokenizers_backend.gives(CLEAN_ON)
        assert not transformers_backend.gives(CLEAN_ON) and transformers_backend.gives(CLEAN_OFF)
        ids = transformers_backend.encode("x != y , don ' t")
        assert transformers_backend.auto.decode(ids, clean_up_tokenization_spaces=True) == "x != y , don ' t"
        assert llama.gives(DecodeSettings(skip_special=True)) and not llama.gives(CLEAN_OFF)
        assert not any(b.gives(DecodeSettings(spaces_between_specials=True))
                       for b in (tokenizers_backend, transformers_backend, llama))
    finally:
        for b in (tokenizers_backend, transformers_backend, llama):
            b.close()


def _run(settings: DecodeSettings, engines: dict[str, str]):
    results = run_compare(["llama-bpe"], ["edge", "ids"], ["ref", *(f"{k}={v}" for k, v in engines.items())],
                          CompareOptions(ops=("decode",), decoding=settings))
    causes = {name: Counter(m.cause for m in results.mismatches if m.backend == name) for name in engines}
    cases = {r.backend: r.cases for r in results.runs}
    return results, causes, cases


@pytest.mark.parametrize("forced", [True, False])
def test_clean_up_forced_names_an_engine_that_ignores_it(zoo, forced):
    """``--clean-up-spaces on|off`` on Llama 3: llama.cpp (the oracle chain's decoder) has no switch,
    so the reference judges and the run says so; llama.cpp is not tried. An engine that takes
    clean_up_tokenization_spaces and leaves transformers' own decode to it (which never cleans up
    a BPE model) is named decode.cleanup on every mismatch when clean-up is forced on, and agrees
    when it is forced off (that is what it does); its twin that cleans up as asked agrees."""
    zoo("llama-bpe")
    results, causes, cases = _run(DecodeSettings(clean_up=forced), {
        "ignores": f"py:{ENGINE}:CleanUpIgnored", "twin": f"py:{ENGINE}:Engine"})
    assert any("llama.cpp cannot decode with --clean-up-spaces" in note and "judged against ref" in note
               for note in results.options["unavailable"])
    assert cases["llama.cpp"] == 0 and cases["twin"] == cases["ignores"] > 900
    assert causes["twin"] == Counter()
    if forced:
        assert causes["ignores"] == Counter({"decode.cleanup": causes["ignores"].total()})
        assert causes["ignores"].total() >= 9  # ' !', ' ,', " 'm", … of the edge corpus
    else:
        assert causes["ignores"] == Counter()


def test_spaces_between_specials_names_an_engine_that_drops_the_setting(zoo):
    """``--spaces-between-specials``: an engine that passes spaces_between_special_tokens=True to
    transformers 5.23, which takes it and drops it, is named decode.specials-spaced on every id
    sequence with a special token between words; its twin, which spaces them apart as vLLM's
    detokenizer does, agrees on every case."""
    zoo("llama-bpe")
    _, causes, cases = _run(DecodeSettings(clean_up=False, spaces_between_specials=True), {
        "drops": f"py:{ENGINE}:SpacingIgnored", "twin": f"py:{ENGINE}:Engine"})
    assert cases["twin"] == cases["drops"] > 900
    assert causes["twin"] == Counter()
    assert causes["drops"] == Counter({"decode.specials-spaced": causes["drops"].total()}) and causes["drops"].total() >= 2


def test_transformers_js_decodes_as_asked(zoo, node_engines):
    """transformers.js 4.3.1 (npm @huggingface/transformers) takes skip_special_tokens and
    clean_up_tokenization_spaces in ``decode`` (src/tokenization_utils.js ``decode_single`` hands both
    to its tokenizer; null: the tokenizer_config's value). Forced on and off on Llama 3 it agrees
    with the reference on every case; it has no spaces between special tokens (the wrapper answers
    an error), so that setting is not tried on it: its run judges no case."""
    zoo("llama-bpe")
    spec = node("transformers_js.mjs", "{tokenizer_json}")
    for forced in (True, False):
        _, causes, cases = _run(DecodeSettings(clean_up=forced), {"tjs": spec})
        assert cases["tjs"] > 900 and causes["tjs"] == Counter(), (forced, causes)
    _, causes, cases = _run(DecodeSettings(spaces_between_specials=True), {"tjs": spec})
    assert cases["tjs"] == 0 and causes["tjs"] == Counter()


BLIND = Path(__file__).parents[1] / "engines" / "blind" / "decode_settings_blind.py"
TOOL_TEXTS = ["Hi<tool_call> call</tool_call> ok", "<think>x</think>y and <think> z </think>", "plain words , here"]


@pytest.mark.parametrize("model,bug,settings,cause", [
    ("llama-bpe", "writes-specials", DecodeSettings(skip_special=True, clean_up=False), "decode.specials-written"),
    ("llama-bpe", "never-cleans", DecodeSettings(clean_up=True), "decode.cleanup"),
    ("llama-bpe", "always-cleans", DecodeSettings(clean_up=False), "decode.cleanup"),
    ("llama-bpe", "no-spacing", DecodeSettings(clean_up=False, spaces_between_specials=True), "decode.specials-spaced"),
    ("qwen3", "spaces-specials-only", DecodeSettings(spaces_between_specials=True), "decode.specials-spaced"),
])
def test_a_blind_engine_with_one_decode_setting_bug_is_named(zoo, tmp_path, model, bug, settings, cause):
    """tests/engines/blind/decode_settings_blind.py, written by a helper from docs/contracts.md and a
    one-line description of each bug, on tokenizers, without seeing the diagnosis: with one bug it is
    named by the cause that reproduces it on every mismatch, and its bug-free twin agrees on every
    case. On Qwen3, whose tool and think tags are added tokens that are not special, spacing only the
    special ones is told apart from vLLM's spacing of every added token."""
    zoo(model)
    texts = tmp_path / "tools.jsonl"
    texts.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TOOL_TEXTS)), "utf-8")
    engine = f"cmd:{sys.executable} {BLIND} {{tokenizer_json}}"
    results = run_compare([model], ["edge", "ids", str(texts)], ["ref", f"bug={engine} --bug {bug}", f"twin={engine}"],
                          CompareOptions(ops=("decode",), decoding=settings))
    causes = {name: Counter(m.cause for m in results.mismatches if m.backend == name) for name in ("bug", "twin")}
    cases = {r.backend: r.cases for r in results.runs}
    assert cases["bug"] == cases["twin"] > 900
    assert causes["twin"] == Counter()
    assert causes["bug"].total() >= 2 and causes["bug"][cause] == causes["bug"].total(), causes["bug"]


def test_the_settings_on_the_command_line_and_in_a_resume(zoo, tmp_path):
    """``--clean-up-spaces`` and ``--spaces-between-specials`` are refused without ``--ops decode``
    (streams never take them), stored in the journal, and a resume of the run keeps them: the same
    summary, its options saying what was asked."""
    import json
    import os
    import subprocess

    zoo("llama-bpe")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def tokparity(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tokparity", *args, "-q"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)

    refused = tokparity("compare", "llama-bpe", "-c", "edge", "--clean-up-spaces", "on", "-o", "no")
    assert refused.returncode == 2 and "add --ops decode" in refused.stderr and not (tmp_path / "no").exists()
    done = tokparity("compare", "llama-bpe", "-c", "ids", "--ops", "decode", "--clean-up-spaces", "off",
                     "--spaces-between-specials", "-b", "ref", "-b", f"twin=py:{ENGINE}:Engine", "-o", "out")
    assert done.returncode == 0, done.stderr
    first = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))
    assert first["options"]["clean_up_spaces"] is False and first["options"]["spaces_between_specials"] is True
    assert next(r for r in first["runs"] if r["backend"] == "twin")["cases"] > 20
    again = tokparity("compare", "--resume", "out")
    assert again.returncode == 0, again.stderr
    resumed = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))
    assert resumed["options"] == first["options"] and resumed["runs"] == first["runs"]


@pytest.mark.parametrize("bug", ["keeps-bos", ""])
def test_remove_special_as_llama_cpp_does_it(zoo, bug):
    """``--remove-special``: llama.cpp's ``llama_detokenize(remove_special=true)`` takes off a first
    BOS and a last EOS the vocabulary adds, and then keeps the first token's leading space
    (llama-vocab.cpp ``detokenize`` sets ``remove_space = false``): ``[BOS, ▁Hello, ▁world]`` on
    Llama 2 is ' Hello world', where tokenizers' skip_special_tokens gives 'Hello world'. The
    reference agrees with llama.cpp on the texts' ids with their BOS (``--add-special``); a cmd:
    engine on llama-cpp-python that ignores the request's remove_special is named
    decode.remove-special on every mismatch, its twin agrees."""
    model = zoo("llama-spm")
    reference = RefTokenizer(load_vocab(model.path("gguf")))
    ids = reference.encode("Hello world", add_special=True)
    assert reference.decode_as(ids, DecodeSettings(remove_special=True)) == " Hello world"
    from tokenizers import Tokenizer
    llama2 = Tokenizer.from_file(str(zoo("lenml-llama2").path("tokenizer_json")))
    assert llama2.decode(llama2.encode("Hello world").ids, skip_special_tokens=True) == "Hello world"
    engine = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'engines' / 'stream_engine.py'} {{gguf}}"
    results = run_compare(["llama-spm"], ["edge", "ids"], ["ref", f"eng={engine}" + (f" --bug {bug}" if bug else "")],
                          CompareOptions(add_special=True, ops=("decode",), decoding=DecodeSettings(remove_special=True)))
    runs = {r.backend: r for r in results.runs if r.op == "decode"}
    assert runs["ref"].cases > 900 and runs["ref"].mismatches == 0
    causes = Counter(m.cause for m in results.mismatches if m.backend == "eng")
    if not bug:
        assert runs["eng"].cases > 900 and causes == Counter()
        return
    assert runs["eng"].mismatches > 500 and causes == Counter({"decode.remove-special": runs["eng"].mismatches})
