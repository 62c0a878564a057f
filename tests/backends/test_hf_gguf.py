"""hf-gguf: the tokenizer transformers builds from a GGUF, against llama.cpp's golden ids.

These counts are transformers' real behaviour (5.23.0, fed the metadata tokparity reads, the way
its own GGUF loader would feed it without torch), measured on llama.cpp's .inp/.out texts. They
are not tokparity's bugs and not hidden: a change in any of them means transformers changed.
"""

from __future__ import annotations

import pytest

from tokparity.backends.registry import make_backend
from tokparity.errors import TokparityError

# model -> texts whose ids differ from the .out file (of 46; qwen35 has 50 texts)
MISMATCHES = {
    "llama-spm": 15,  # a leading space: " Hello" loses one "▁" (LlamaTokenizer's prefix handling)
    "phi-3": 0,
    "gemma-4": 0,
    "llama-bpe": 1,
    "qwen2": 0,
    "qwen35": 0,
    "gpt-2": 0,
    "falcon": 9,  # "falcon" is not in the converter's GGUF_PRE_TOKENIZER_SPLITS: GPT-2's split is used
    "deepseek-llm": 1,
    "deepseek-coder": 1,
    "starcoder": 1,
    "refact": 1,
    "mpt": 5,  # likewise "mpt"
    "command-r": 1,
}


@pytest.mark.parametrize("model", [pytest.param(m, id=m) for m in MISMATCHES])
def test_agreement_with_golden_ids(backend, golden, model):
    hf_gguf = backend("hf-gguf", model)
    cases = golden(model)
    wrong = [c.index for c in cases if hf_gguf.encode(c.text) != list(c.ids)]
    assert len(wrong) == MISMATCHES[model], f"{model}: texts {wrong} differ"


def test_llama_spm_leading_space(backend):
    hf_gguf, llama = backend("hf-gguf", "llama-spm"), backend("llama.cpp", "llama-spm")
    assert llama.encode(" Hello") == [29871, 15043]
    assert hf_gguf.encode(" Hello") == [15043]


def test_wordpiece_files_are_refused(zoo):
    with pytest.raises(TokparityError, match=r"ggml-vocab-bert-bge.gguf: transformers 5\.\d+\.\d+ cannot build a "
                                             r"tokenizer from this GGUF \(ValueError: .*'bert'"):
        make_backend("hf-gguf", zoo("bert-bge"))


def test_version_names_both_libraries(backend):
    from importlib.metadata import version

    # (whatever releases the extra installed: transformers 5.24.0 came out while 5.23.0 was pinned here)
    assert backend("hf-gguf", "gpt-2").version == f"{version('transformers')} (tokenizers {version('tokenizers')})"


CHILD = """
import sys
from tokparity.backends.registry import make_backend
from tokparity.errors import TokparityError
from tokparity.zoo import resolve_model
try:
    b = make_backend("hf-gguf", resolve_model(sys.argv[1]))
    print([b.encode(t) for t in sys.argv[2:]], b.version)
except TokparityError as e:
    print("error:", e)
print("transformers imported" if "transformers" in sys.modules else "transformers not imported")
"""


def _child(model: str, texts: list[str], cache_dir) -> list[str]:
    import os
    import subprocess
    import sys

    env = dict(os.environ, TOKPARITY_HF_GGUF_CACHE=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", CHILD, model, *texts], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def test_the_conversion_is_kept_and_a_later_run_needs_no_transformers(zoo, tmp_path, monkeypatch):
    """A run converts the GGUF with transformers and keeps the result; the next one (another
    process) loads it without importing transformers, with the same ids and version."""
    from tokparity.corpus import load_corpus

    zoo("nomic-bert-moe")
    texts = [c.text for c in load_corpus("multilingual")][:200] + [" a  b ", "Ω\u00bd", "<s>x</s>"]
    monkeypatch.setenv("TOKPARITY_HF_GGUF_CACHE", "0")
    fresh = make_backend("hf-gguf", zoo("nomic-bert-moe"))
    want = [fresh.encode(t) for t in texts]
    first = _child("nomic-bert-moe", texts, tmp_path)
    assert first[-1] == "transformers imported" and len(list(tmp_path.glob("*.tokenizer.json"))) == 1
    second = _child("nomic-bert-moe", texts, tmp_path)
    assert second[-1] == "transformers not imported"
    assert second[0] == first[0] == f"{want} {fresh.version}"


def test_an_unconvertible_file_keeps_its_error(zoo, tmp_path):
    zoo("bert-bge")
    first = _child("bert-bge", [], tmp_path)
    second = _child("bert-bge", [], tmp_path)
    assert first[0].startswith("error: ggml-vocab-bert-bge.gguf: transformers 5.") and "'bert'" in first[0]
    assert second == [first[0], "transformers not imported"]


def test_a_damaged_entry_is_converted_again(zoo, tmp_path, monkeypatch):
    monkeypatch.setenv("TOKPARITY_HF_GGUF_CACHE", str(tmp_path))
    want = make_backend("hf-gguf", zoo("llama-spm")).encode(" Hello world")
    (entry,) = tmp_path.glob("*.tokenizer.json")
    entry.write_text('{"version": "1.0", "truncated', "utf-8")
    assert make_backend("hf-gguf", zoo("llama-spm")).encode(" Hello world") == want == [15043, 3186]
    assert entry.read_text("utf-8").startswith("{")  and len(entry.read_text("utf-8")) > 100_000  # rewritten
