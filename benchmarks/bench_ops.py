"""What each op costs on its default run: the backends' own time, the harness around it, and the
diagnosis apart.

    python benchmarks/bench_ops.py [--rounds 3] [--ops encode,decode,stream,pieces,chat]

Each op's default run is ``compare --ops OP`` as the CLI runs it without a model: the five
default models on every corpus (the id sequences of ``-c ids`` included), or for chat the five
models with a template on ``chats``. Each run is one process with its journal. The rounds are
interleaved: each round runs every op once, in a turned order. The medians over the rounds are
reported.

1. The backends' own time: ``summary.json``'s ``timing``. It is loading and closing each
   model's backends, and the seconds inside each backend call (``encode``, ``decode``,
   ``stream``, ``piece_bytes``, a template's rendering). The judge's further calls count too: a
   backend's stages on a mismatch, the decoder's text of a stream's prompt, a witness's answer.
   With a decoding op alone, the oracle chain encodes each text; that time is its backends' too.
2. The harness overhead: the wall time less the backends' own and less the diagnosis, over the
   backends' own. Target: at most 25 % per op, on a quiet machine (issue 59).
3. The diagnosis apart: its seconds, and its milliseconds per mismatch. No target.

Results: reports/bench/ops.json and .md (benchlib). Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib, beside this file

from benchlib import Measurement, save  # noqa: E402

OPS = ("encode", "decode", "stream", "pieces", "chat")
TARGET = 25  # % of the backends' own time


def one_run(op: str) -> dict:
    """One default run of ``op`` in this process; its times, as the run's own timing counts them."""
    from tokparity.run.chat import CHAT_MODELS
    from tokparity.run.driver import run_compare
    from tokparity.run.journal import Journal
    from tokparity.run.known import load_known
    from tokparity.run.options import DEFAULT_CORPORA, DEFAULT_MODELS, CompareOptions, Services

    models, corpora = (CHAT_MODELS, ["chats"]) if op == "chat" else (DEFAULT_MODELS, list(DEFAULT_CORPORA))
    with tempfile.TemporaryDirectory() as tmp:
        options = CompareOptions(ops=(op,), services=Services(known=load_known(None)))
        options.services.journal = Journal.create(tmp, "compare", {}, corpora)
        started = time.perf_counter()
        results = run_compare(list(models), corpora, None, options)
        wall = time.perf_counter() - started
        options.services.journal.close()
    per_case = {}  # model/backend -> µs a case
    for model, t in results.timing.items():
        cases = {r.backend: r.cases for r in results.runs if r.model == model and r.cases}
        per_case.update({f"{model}/{name}": seconds / cases[name] * 1e6 for name, seconds in t["backends"].items()
                         if name in cases})
    timing = results.timing.values()
    return {"per_case": per_case, "wall": wall, "load": sum(t["load"] + t.get("close", 0.0) for t in timing),
            "backends": sum(sum(t["backends"].values()) for t in timing),
            "diagnose": sum(t.get("diagnose", 0.0) for t in timing),
            "verdicts": sum(r.cases for r in results.runs), "mismatches": len(results.mismatches)}


def measured(op: str) -> dict:
    """``one_run`` in a process of its own: no op reads another's caches."""
    done = subprocess.run([sys.executable, __file__, "--one", op], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"compare --ops {op} failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--one", help=argparse.SUPPRESS)
    args, _ = p.parse_known_args()
    if args.one:
        print(json.dumps(one_run(args.one)))
        return 0
    ops = args.ops.split(",")
    runs: dict[str, list[dict]] = {op: [] for op in ops}
    for r in range(args.rounds):
        for op in ops[r % len(ops):] + ops[:r % len(ops)]:
            run = measured(op)
            own = run["load"] + run["backends"]
            run["overhead"] = (run["wall"] - run["diagnose"] - own) / own * 100
            runs[op].append(run)
            print(f"round {r + 1}, {op}: wall {run['wall']:.1f} s, backends {own:.1f} s, diagnosis "
                  f"{run['diagnose']:.1f} s, harness {run['overhead']:.0f} %", flush=True)
    rows: list[Measurement] = []
    for op in ops:
        def median(key: str) -> float:
            return statistics.median(run[key] for run in runs[op])  # noqa: B023 (used at once)
        own = median("load") + median("backends")
        mismatches = int(median("mismatches"))
        rows.append(Measurement(
            f"compare --ops {op}: harness overhead over the backends' own time", median("overhead"), "%",
            f"<= {TARGET}", f"median of {args.rounds} interleaved rounds ({', '.join(str(round(run['overhead'])) for run in runs[op])}); "
                            f"wall {median('wall'):.1f} s, backends {own:.1f} s (load and close {median('load'):.1f} s), "
                            f"diagnosis {median('diagnose'):.1f} s; {int(median('verdicts')):,} (case, backend) verdicts, "
                            f"{mismatches:,} mismatches"))
        rows.append(Measurement(f"compare --ops {op}: diagnosis per mismatch", median("diagnose") / max(1, mismatches) * 1000,
                                "ms", "", f"{median('diagnose'):.1f} s over {mismatches:,} mismatches (medians)"))
        # (for information: how much slower the pure-Python reference is than each library, per case)
        for label in sorted(runs[op][0]["per_case"]):
            model, name = label.split("/")
            ref = f"{model}/ref"
            if name != "ref" and all(ref in run["per_case"] and run["per_case"].get(label) for run in runs[op]):
                ratio = statistics.median(run["per_case"][ref] / run["per_case"][label] for run in runs[op])
                rows.append(Measurement(f"{op}: ref / {name} on {model}", ratio, "ratio", "",
                                        "median of the rounds' ratios of µs a case"))
    return 0 if save("ops", rows, "Each op's default run: the harness around the backends, and the diagnosis") else 1


if __name__ == "__main__":
    sys.exit(main())
