"""Speed of the reference tokenizers against the originals, on the lines of Botchan.

    python benchmarks/bench_reference.py [--repeat 5]

Each measurement tokenizes every line of SentencePiece's test/botchan.txt one call per line
(what a parity run does), repeated; the median run is reported, and all ratios come from the
same process so the machine's speed cancels out. Targets (issue #4):

    ref / llama.cpp   on llama-spm        >= 1     (ref at least as fast)
    ref / tokenizers  on llama-bpe        >= 0.5
    ref / sentencepiece on botchan-unigram >= 0.2
    gemma-4 (262k) ready to encode        <= 2 s

Then, for information, the throughput (cases per second) of every backend tokparity can run on
one model per family (SPM llama-spm, UGM botchan-unigram, BPE llama-bpe), on Botchan's lines and
on the multilingual corpus, called as ``compare`` calls them. Results: reports/bench/reference.*
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib, beside this file


def median_time(fn, lines, repeat):
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for line in lines:
            fn(line)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def llama_cpp_encoder(path):
    import llama_cpp

    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    buf = (llama_cpp.llama_token * 65536)()

    def encode(text):
        data = text.encode("utf-8")
        n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, 65536, False, False)
        return buf[:n]

    encode.keepalive = llm  # type: ignore[attr-defined]  # the model must outlive the closure
    return encode


def family_throughput(repeat: int) -> list:
    """Every backend tokparity can run on one model per family, on Botchan's lines and on the
    multilingual corpus: cases per second through the backends as ``compare`` calls them."""
    from benchlib import Measurement

    from tokparity.backends.registry import backends_for, make_backend
    from tokparity.corpus import load_corpus
    from tokparity.zoo import resolve_model, zoo_text

    texts = {"botchan": [line for line in zoo_text("botchan").read_text("utf-8").splitlines() if line],
             "multilingual": [case.text for case in load_corpus("multilingual")]}
    rows = []
    print(f"\n{'family':6} {'model':16} {'backend':14} " + "  ".join(f"{k:>16}" for k in texts))
    for family, name in (("SPM", "llama-spm"), ("UGM", "botchan-unigram"), ("BPE", "llama-bpe")):
        model = resolve_model(name)
        for backend_name in backends_for(model):
            if backend_name == "golden":
                continue  # stored ids, not a tokenizer
            backend = make_backend(backend_name, model)
            rates = {}
            for corpus, lines in texts.items():
                backend.encode(lines[0])  # warm up (lazy tables, first-call costs)
                seconds = median_time(lambda x, b=backend: b.encode(x), lines, repeat)
                rates[corpus] = len(lines) / seconds
                rows.append(Measurement(f"{family} {name} {backend_name} on {corpus}", rates[corpus], "cases/s",
                                        detail=f"{len(lines)} texts, median of {repeat}"))
            backend.close()
            print(f"{family:6} {name:16} {backend_name:14} " + "  ".join(f"{r:>10,.0f} case/s" for r in rates.values()),
                  flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from benchlib import Measurement, save

    from tokparity.reference import RefTokenizer
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model, zoo_text

    lines = [line for line in zoo_text("botchan").read_text("utf-8").splitlines() if line]
    print(f"{len(lines)} lines of botchan.txt, median of {args.repeat} runs, one call per line\n")
    rows: list[Measurement] = []

    def row(label, ref_s, orig_s, orig_name, target):
        ratio = orig_s / ref_s
        print(f"{label:18} ref {ref_s * 1e3:8.1f} ms   {orig_name} {orig_s * 1e3:8.1f} ms   "
              f"ref speed / {orig_name} speed = {ratio:.2f}", flush=True)
        rows.append(Measurement(f"ref / {orig_name} on {label} (botchan lines)", ratio, "ratio", target,
                                f"ref {ref_s / len(lines) * 1e6:.1f} µs/line, {orig_name} "
                                f"{orig_s / len(lines) * 1e6:.1f} µs/line"))

    # llama-spm: ref vs llama.cpp (low-level llama_tokenize)
    m = resolve_model("llama-spm")
    ref = RefTokenizer(load_vocab(m.files["gguf"]))
    lc = llama_cpp_encoder(m.files["gguf"])
    assert all(ref.encode(x) == list(lc(x)) for x in lines[:200])
    row("llama-spm", median_time(ref.encode, lines, args.repeat), median_time(lc, lines, args.repeat),
        "llama.cpp", ">= 1")

    # llama-bpe: ref (GGUF) vs Hugging Face tokenizers (tokenizer.json), line by line
    import tokenizers

    m = resolve_model("llama-bpe")
    ref = RefTokenizer(load_vocab(m.files["gguf"]))
    hf = tokenizers.Tokenizer.from_file(str(m.files["tokenizer_json"]))
    assert all(ref.encode(x) == hf.encode(x, add_special_tokens=False).ids for x in lines[:200])
    row("llama-bpe", median_time(ref.encode, lines, args.repeat),
        median_time(lambda x: hf.encode(x, add_special_tokens=False), lines, args.repeat), "tokenizers", ">= 0.5")

    # botchan-unigram: ref vs SentencePiece
    import sentencepiece

    m = resolve_model("botchan-unigram")
    ref = RefTokenizer(load_vocab(m.files["spm_model"]))
    sp = sentencepiece.SentencePieceProcessor(model_file=str(m.files["spm_model"]))
    assert all(ref.encode(x) == sp.encode(x) for x in lines[:200])
    row("botchan-unigram", median_time(ref.encode, lines, args.repeat), median_time(sp.encode, lines, args.repeat),
        "sentencepiece", ">= 0.2")

    # gemma-4: from the file to the first ids
    path = resolve_model("gemma-4").files["gguf"]
    start = time.perf_counter()
    RefTokenizer(load_vocab(path)).encode("Hello world")
    ready = time.perf_counter() - start
    print(f"{'gemma-4':18} ready to encode in {ready:.2f} s (262,144 tokens, 514,906 merges)")
    rows.append(Measurement("gemma-4 (262k tokens): file to first ids with ref", ready, "s", "<= 2"))

    rows += family_throughput(max(3, args.repeat // 2))
    return 0 if save("reference", rows, "Reference tokenizers against the originals, and every backend's "
                                         "throughput per family") else 1


if __name__ == "__main__":
    sys.exit(main())
