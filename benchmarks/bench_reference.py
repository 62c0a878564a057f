"""Speed of the reference tokenizers against the originals, on the lines of Botchan.

    python benchmarks/bench_reference.py [--repeat 5]

Each measurement tokenizes every line of SentencePiece's test/botchan.txt one call per line
(what a parity run does), repeated; the median run is reported, and all ratios come from the
same process so the machine's speed cancels out. Targets (issue #4):

    ref / llama.cpp   on llama-spm        >= 1     (ref at least as fast)
    ref / tokenizers  on llama-bpe        >= 0.5
    ref / sentencepiece on botchan-unigram >= 0.2
    gemma-4 (262k) ready to encode        <= 2 s
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


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

    encode.keepalive = llm  # noqa: the model must outlive the closure
    return encode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from tokparity.reference import RefTokenizer
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model, zoo_text

    lines = [line for line in zoo_text("botchan").read_text("utf-8").splitlines() if line]
    print(f"{len(lines)} lines of botchan.txt, median of {args.repeat} runs, one call per line\n")
    results = {}

    def row(label, ref_s, orig_s, orig_name):
        ratio = orig_s / ref_s
        print(f"{label:18} ref {ref_s * 1e3:8.1f} ms   {orig_name} {orig_s * 1e3:8.1f} ms   "
              f"ref speed / {orig_name} speed = {ratio:.2f}")
        return ratio

    # llama-spm: ref vs llama.cpp (low-level llama_tokenize)
    m = resolve_model("llama-spm")
    ref = RefTokenizer(load_vocab(m.files["gguf"]))
    lc = llama_cpp_encoder(m.files["gguf"])
    assert all(ref.encode(x) == list(lc(x)) for x in lines[:200])
    results["llama-spm"] = row("llama-spm", median_time(ref.encode, lines, args.repeat),
                               median_time(lc, lines, args.repeat), "llama.cpp")

    # llama-bpe: ref (GGUF) vs Hugging Face tokenizers (tokenizer.json), line by line
    import tokenizers

    m = resolve_model("llama-bpe")
    ref = RefTokenizer(load_vocab(m.files["gguf"]))
    hf = tokenizers.Tokenizer.from_file(str(m.files["tokenizer_json"]))
    assert all(ref.encode(x) == hf.encode(x, add_special_tokens=False).ids for x in lines[:200])
    results["llama-bpe"] = row("llama-bpe", median_time(ref.encode, lines, args.repeat),
                               median_time(lambda x: hf.encode(x, add_special_tokens=False), lines, args.repeat),
                               "tokenizers")

    # botchan-unigram: ref vs SentencePiece
    import sentencepiece

    m = resolve_model("botchan-unigram")
    ref = RefTokenizer(load_vocab(m.files["spm_model"]))
    sp = sentencepiece.SentencePieceProcessor(model_file=str(m.files["spm_model"]))
    assert all(ref.encode(x) == sp.encode(x) for x in lines[:200])
    results["botchan-unigram"] = row("botchan-unigram", median_time(ref.encode, lines, args.repeat),
                                     median_time(sp.encode, lines, args.repeat), "sentencepiece")

    # gemma-4: from the file to the first ids
    path = resolve_model("gemma-4").files["gguf"]
    start = time.perf_counter()
    RefTokenizer(load_vocab(path)).encode("Hello world")
    ready = time.perf_counter() - start
    print(f"{'gemma-4':18} ready to encode in {ready:.2f} s (262,144 tokens, 514,906 merges)")

    targets = {"llama-spm": 1.0, "llama-bpe": 0.5, "botchan-unigram": 0.2}
    print()
    ok = True
    for name, target in targets.items():
        met = results[name] >= target
        ok &= met
        print(f"{name:18} ratio {results[name]:.2f}  target >= {target}  {'met' if met else 'NOT MET'}")
    print(f"{'gemma-4':18} {ready:.2f} s  target <= 2 s  {'met' if ready <= 2 else 'NOT MET'}")
    ok &= ready <= 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
