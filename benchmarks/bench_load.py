"""Vocabulary load time: tokparity's GGUF loader vs gguf-py's GGUFReader vs llama.cpp (vocab_only).

Prints medians over repeated runs in one process and the ratios between them. Run with
`nox -s bench` or `python benchmarks/bench_load.py [MODEL ...]`.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib, beside this file

from benchlib import Measurement, save  # noqa: E402

from tokparity.vocab import load_vocab  # noqa: E402
from tokparity.zoo import resolve_model  # noqa: E402

DEFAULT_MODELS = ["gemma-4", "nomic-bert-moe", "llama-bpe", "llama-spm"]


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def tokparity_load(path):
    import tokparity.vocab
    tokparity.vocab._CACHE.clear()  # a load from the file, not from the in-process cache
    v = load_vocab(path)
    v.fingerprint  # hashing included: inspect always shows it
    return v


def tokparity_load_with_merges(path):
    v = tokparity_load(path)
    v.merges
    return v


def ggufpy_field_by_field(path):
    """What a user of gguf-py writes: every token string read part by part."""
    from gguf import GGUFReader
    r = GGUFReader(str(path))
    f = r.fields["tokenizer.ggml.tokens"]
    tokens = [bytes(f.parts[i]).decode("utf-8", "replace") for i in f.data]
    if "tokenizer.ggml.merges" in r.fields:
        m = r.fields["tokenizer.ggml.merges"]
        [bytes(m.parts[i]) for i in m.data]
    return tokens


def llama_cpp_vocab_only(path):
    import llama_cpp
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    llm.close() if hasattr(llm, "close") else None


def main(models: list[str]) -> int:
    rows = []
    print("## Vocabulary load time (median seconds; ratio = other / tokparity)\n")
    print("| model | tokparity | tokparity + merges | gguf-py field by field | llama.cpp vocab_only | gguf-py ratio | llama.cpp ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in models:
        path = resolve_model(name).files["gguf"]
        ours = median_seconds(lambda: tokparity_load(path), 5)
        ours_merges = median_seconds(lambda: tokparity_load_with_merges(path), 3)
        ggufpy = median_seconds(lambda: ggufpy_field_by_field(path), 1)
        llama = median_seconds(lambda: llama_cpp_vocab_only(path), 3)
        print(f"| {name} | {ours:.3f} | {ours_merges:.3f} | {ggufpy:.2f} | {llama:.3f} | {ggufpy / ours:.0f}× | {llama / ours:.1f}× |",
              flush=True)
        rows.append(Measurement(f"{name}: GGUF vocabulary loaded by tokparity", ours, "s",
                                "<= 1" if name == "gemma-4" else "",
                                f"{ours_merges:.3f} s with the merges decoded; gguf-py field by field {ggufpy:.2f} s "
                                f"({ggufpy / ours:.0f}x); llama.cpp vocab_only {llama:.3f} s ({llama / ours:.1f}x)"))
    return 0 if save("load", rows, "Vocabulary load time (medians)") else 1


if __name__ == "__main__":
    names = [a for a in sys.argv[1:] if not a.startswith("-")]  # (nox -s bench passes --repeat N)
    sys.exit(main(names or DEFAULT_MODELS))
