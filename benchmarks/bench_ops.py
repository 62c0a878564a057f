"""What the decoding ops cost: each backend's own time per case, and the harness around it.

    python benchmarks/bench_ops.py [--models llama-spm,llama-bpe,botchan-unigram,nomic-bert-moe,bert-bge]

For each op (decode, stream, pieces) one ``compare --ops OP`` of the default models on every
corpus (the id sequences of ``-c ids`` included, as in ``all``), in this process, with its
journal, as the CLI runs it:

1. Each backend's own time per case (``summary.json``'s ``timing``: the seconds inside the
   backend's ``decode`` / ``stream`` / ``piece_bytes`` for every case; with the op alone the
   oracle chain also encodes each text, which is counted to its backends), and the reference's
   time against each library's on the same cases (ratio: how much slower tokparity's pure-Python
   reference is, for information).
2. The harness overhead per op: the wall time less the backends' own (loading and closing
   included) and less the diagnosis, over the backends' own. For information: encoding's target
   (<= 15 %, bench_compare.py) is not met either, and a decoding op asks less of a backend per
   case than encoding does, so the judging around it weighs more.

Results: reports/bench/ops.json and .md (benchlib). No target, so the exit status is 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib, beside this file

from benchlib import Measurement, save  # noqa: E402

OPS = ("decode", "stream", "pieces")


def one_op(op: str, models: list[str]) -> list[Measurement]:
    from tokparity.run.driver import run_compare
    from tokparity.run.journal import Journal
    from tokparity.run.known import load_known
    from tokparity.run.options import DEFAULT_CORPORA, CompareOptions, Services

    with tempfile.TemporaryDirectory() as tmp:
        options = CompareOptions(ops=(op,), services=Services(known=load_known(None)))
        options.services.journal = Journal.create(tmp, "compare", {}, list(DEFAULT_CORPORA))
        started = time.perf_counter()
        results = run_compare(models, DEFAULT_CORPORA, None, options)
        wall = time.perf_counter() - started
        options.services.journal.close()
    load = sum(t["load"] + t.get("close", 0.0) for t in results.timing.values())
    spent = sum(sum(t["backends"].values()) for t in results.timing.values())
    diagnose = sum(t.get("diagnose", 0.0) for t in results.timing.values())
    own = load + spent
    judged = sum(r.cases for r in results.runs)
    rows = [Measurement(f"compare --ops {op}: harness overhead over the backends' own time", (wall - diagnose - own)
                        / own * 100, "%", "", f"wall {wall:.1f} s, backends {own:.1f} s (load and close {load:.1f} s), "
                                              f"diagnosis {diagnose:.1f} s, {judged:,} (case, backend) verdicts, "
                                              f"{len(results.mismatches):,} mismatches")]
    print(rows[-1].name, f"{rows[-1].value:.0f} %", rows[-1].detail, flush=True)
    for model, timing in results.timing.items():
        cases = {r.backend: r.cases for r in results.runs if r.model == model}
        per_case = {name: seconds / cases[name] * 1e6 for name, seconds in timing["backends"].items()
                    if cases.get(name)}
        for name, us in sorted(per_case.items()):
            rows.append(Measurement(f"{op}: {name} on {model}", us, "µs/case", "",
                                    f"{timing['backends'][name]:.2f} s over {cases[name]:,} cases"))
        for name, us in per_case.items():
            if name != "ref" and "ref" in per_case and us > 0:
                rows.append(Measurement(f"{op}: ref / {name} on {model}", per_case["ref"] / us, "ratio", "",
                                        f"{per_case['ref']:.0f} vs {us:.0f} µs/case"))
    return rows


def main() -> int:
    from tokparity.run.options import DEFAULT_MODELS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(DEFAULT_MODELS))
    args, _ = p.parse_known_args()
    rows: list[Measurement] = []
    for op in OPS:
        rows += one_op(op, args.models.split(","))
    save("ops", rows, "The decoding ops: each backend's time per case, and the harness around it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
