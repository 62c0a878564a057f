"""What naming a cause costs on each op: the diagnosis's seconds per mismatch on engines with bugs.

    python benchmarks/bench_diagnosis_ops.py [--rounds 3] [--ops decode,stream,pieces,chat]

The default models agree on the decoding ops and on chat, so their diagnosis costs nothing there.
Here each op gets an engine with bugs, written blind by a helper (tests/engines/blind/): a decode
that strips a space off each piece, a stream of raw byte-level strings, a pieces table of ids
decoded alone, and a chat engine with three bugs at once (a BOS added, the last newline cut,
special-token text not parsed). A second chat engine rewrites each content as JSON twice, a bug
no way of making the prompt reproduces: its rows cost the whole search. Each is one ``compare``
in this process against tokenizers, on ``edge`` and ``ids``. A chat run reads ``chats``, and the
second engine its own conversations. The run's ``timing.diagnose`` counts every case's search and
the run's verdict, checked on the agreements. Medians over the rounds.
Results: reports/bench/diagnosis_ops.json and .md. No target: exit 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib, beside this file

from benchlib import Measurement, save  # noqa: E402

ENGINES = Path(__file__).resolve().parents[1] / "tests" / "engines" / "blind"
# model, op, engine file and its arguments, its bugs, the corpora of a chat run
CASES = (("llama-bpe", "decode", "detok_blind.py {tokenizer_json}", ("lstrip-pieces",), ()),
         ("llama-bpe", "stream", "detok_blind.py {tokenizer_json}", ("metaspace-stream",), ()),
         ("lenml-llama2", "pieces", "detok_blind.py {tokenizer_json}", ("pieces-alone",), ()),
         ("gemma-3", "chat", "chat_blind.py {tokenizer_json}", ("double-bos", "drop-final-newline", "text-specials"),
          ("chats",)),
         ("qwen3", "chat", "blind25b_chat.py {tokenizer_json} {tokenizer_config}", ("json-twice",),
          (str(ENGINES / "blind25b_chats.jsonl"),)))


def one(model: str, op: str, engine: str, bugs: tuple[str, ...], chats: tuple[str, ...]) -> tuple[float, int]:
    """The diagnosis's seconds, and the engine's mismatches."""
    from tokparity.run.driver import run_compare
    from tokparity.run.options import CompareOptions

    command = f"eng=cmd:{sys.executable} {ENGINES / engine}" + "".join(f" --bug {b}" for b in bugs)
    if op == "chat":
        results = run_compare([model], list(chats), ["hf", command], CompareOptions(ops=("chat",)))
    else:
        results = run_compare([model], ["edge", "ids"], [command], CompareOptions(ops=(op,), oracle="hf"))
    mismatches = sum(r.mismatches for r in results.runs if r.backend == "eng")
    return results.timing[model]["diagnose"], mismatches


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ops", default="decode,stream,pieces,chat", help="the ops measured, comma-separated")
    args, _ = p.parse_known_args()
    rows = []
    for model, op, engine, bugs, chats in CASES:
        if op not in args.ops.split(","):
            continue
        rounds = [one(model, op, engine, bugs, chats) for _ in range(args.rounds)]
        seconds = statistics.median(s for s, _ in rounds)
        mismatches = rounds[0][1]
        rows.append(Measurement(f"diagnosis of {op} on {model} ({', '.join(bugs)})", seconds / max(1, mismatches) * 1e3,
                                "ms/mismatch", "", f"{seconds:.2f} s for {mismatches} mismatches "
                                                   f"(rounds {', '.join(f'{s:.2f}' for s, _ in rounds)} s)"))
        print(rows[-1].name, f"{rows[-1].value:.2f}", rows[-1].unit, rows[-1].detail, flush=True)
    save("diagnosis_ops", rows, "The diagnosis's cost per op, on engines with bugs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
