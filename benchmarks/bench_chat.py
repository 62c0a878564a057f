"""What ``compare --ops chat`` costs: conversations judged per second, each backend's own time
per conversation, and the reference's (its template rendered in the sandbox's child process, the
prompt encoded by the oracle) against transformers' ``apply_chat_template`` on the same ones.

    python benchmarks/bench_chat.py [--models qwen3,gemma-3,llama-bpe,phi-3,qwen2] [--rounds 3]

Each round is one ``compare --ops chat`` of the models on ``chats`` (35 conversations) in this
process, with its journal, as the CLI runs it; the medians over the rounds are reported. The
first round starts the sandbox and the libraries' child processes like every later one (a chat
run isolates every library). Results: reports/bench/chat.json and .md. No target: exit 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib, beside this file

from benchlib import Measurement, save  # noqa: E402

MODELS = ("qwen3", "gemma-3", "llama-bpe", "phi-3", "qwen2")


def one_round(models: list[str]) -> tuple[float, int, dict[tuple[str, str], float], dict[tuple[str, str], int]]:
    from tokparity.run.driver import run_compare
    from tokparity.run.journal import Journal
    from tokparity.run.known import load_known
    from tokparity.run.options import CompareOptions, Services

    with tempfile.TemporaryDirectory() as tmp:
        options = CompareOptions(ops=("chat",), services=Services(known=load_known(None)))
        options.services.journal = Journal.create(tmp, "compare", {}, ["chats"])
        started = time.perf_counter()
        results = run_compare(models, ["chats"], None, options)
        wall = time.perf_counter() - started
        options.services.journal.close()
    conversations = {(r.model, r.backend): r.cases for r in results.runs}
    seconds = {(model, name): s for model, t in results.timing.items() for name, s in t["backends"].items()}
    judged = len({(m, 0) for m, _ in conversations}) * 35
    return wall, judged, seconds, conversations


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--rounds", type=int, default=3)
    args, _ = p.parse_known_args()
    models = args.models.split(",")
    rounds = [one_round(models) for _ in range(args.rounds)]
    walls = [r[0] for r in rounds]
    judged = rounds[0][1]
    rows = [Measurement("compare --ops chat: conversations judged per second (whole run)", judged / statistics.median(walls),
                        "cases/s", "", f"{judged} conversations of {len(models)} models, median wall "
                                       f"{statistics.median(walls):.1f} s of {len(walls)} rounds (loading included)")]
    conversations = rounds[0][3]
    per_case: dict[tuple[str, str], float] = {}
    for key in rounds[0][2]:
        model, name = key
        cases = conversations.get((model, name)) or (35 if name == "ref" else 0)
        if cases:
            per_case[key] = statistics.median(r[2].get(key, 0.0) for r in rounds) / cases * 1e3
    for (model, name), ms in sorted(per_case.items()):
        rows.append(Measurement(f"chat: {'the reference' if name == 'ref' else name} on {model}", ms, "ms/case"))
        if name != "ref" and (model, "ref") in per_case and ms > 0:
            rows.append(Measurement(f"chat: reference / {name} on {model}", per_case[model, "ref"] / ms, "ratio", "",
                                    f"{per_case[model, 'ref']:.2f} vs {ms:.2f} ms per conversation"))
    for row in rows:
        print(row.name, f"{row.value:.2f}", row.unit, row.detail, flush=True)
    save("chat", rows, "Chat templates: conversations per second, and each side's time per conversation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
