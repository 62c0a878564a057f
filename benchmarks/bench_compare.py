"""What ``compare`` costs on top of the backends it runs, how it scales, and what two jobs buy.

    python benchmarks/bench_compare.py [--rounds 5] [--fuzz-seconds 20]

1. Harness overhead of an agreeing run (llama-spm, llama-bpe and bert-bge with ref, llama.cpp
   and golden): the harness alone, no mismatch to explain. The backends' own time is what
   ``summary.json``'s ``timing`` records: loading and closing each model's backends (and its
   vocabulary) plus the seconds inside each backend call. Everything else is tokparity's. For
   information: each op's default run, and its target, is ``bench_ops.py``'s.
2. Diagnosis: the default run as whole ``tokparity compare`` processes with and without
   ``--no-diagnose``, interleaved rounds; the median of the rounds' ratios. Target: <= 1.5x.
   Beside it, the share of the mismatches whose cause was reproduced, and of the (model, backend)
   runs whose root cause is proven.
3. ``--jobs 2`` against ``--jobs 1``: whole ``tokparity compare`` processes on the default run,
   interleaved rounds; the median of the rounds' ratios (wall medians beside it). Target on 2
   cores: >= 1.6x.
4. Scaling: llama-spm with every backend on the multilingual corpus repeated 1x, 4x and 16x
   (each copy of a case gets its own id), whole processes, 3 interleaved rounds: wall time,
   time per case in the run (summary.json's seconds less loading and closing), peak RSS.
   Linear means the time per case stays put from 4x to 16x (target: at most 1.5x).
5. Fuzzing: cases per second of ``tokparity fuzz MODEL -b ref`` (generators and Hypothesis,
   every case judged against the oracle).
6. ``regress --ray`` (a Ray started here, a task per model) against ``regress`` in one process,
   over the committed goldens: whole processes, 3 interleaved rounds, the median of the rounds'
   ratios, the Ray's start included. Target on 2 cores: >= 1.2x.

Results: reports/bench/compare.json and .md (benchlib). Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib, beside this file

from benchlib import Measurement, save  # noqa: E402

# The peak RSS of the tokparity process itself: VmHWM of its own address space. (ru_maxrss is no
# good here: Linux carries it over exec from the forking parent, and the parent, this benchmark,
# has just run the default compare in process: every child then "peaked" at its 800 MiB.)
RSS_PROBE = ("import re, resource, sys\nfrom tokparity.cli import main\ncode = main(sys.argv[1:])\n"
             "try:\n    peak = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
             "except (OSError, AttributeError):\n    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
             "print('PEAK_RSS_KB', peak)\nsys.exit(code)")


def harness_overhead() -> list[Measurement]:
    """An agreeing run: the harness alone, no mismatch to explain."""
    from tokparity.run.driver import run_compare
    from tokparity.run.journal import Journal
    from tokparity.run.known import load_known
    from tokparity.run.options import DEFAULT_CORPORA, CompareOptions, Services

    label = "agreeing run: llama-spm, llama-bpe, bert-bge with ref, llama.cpp, golden"
    models, backends = ("llama-spm", "llama-bpe", "bert-bge"), ["ref", "llama.cpp", "golden"]
    with tempfile.TemporaryDirectory() as tmp:
        options = CompareOptions(explicit_backends=True, services=Services(known=load_known(None)))
        options.services.journal = Journal.create(tmp, "compare", {}, list(DEFAULT_CORPORA))
        started = time.perf_counter()
        results = run_compare(models, DEFAULT_CORPORA, backends, options)
        wall = time.perf_counter() - started
        options.services.journal.close()
    load = sum(t["load"] + t.get("close", 0.0) for t in results.timing.values())
    encode = sum(sum(t["backends"].values()) for t in results.timing.values())
    diagnose = sum(t.get("diagnose", 0.0) for t in results.timing.values())
    own = load + encode
    pairs = sum(r.cases for r in results.runs)
    overhead = (wall - diagnose - own) / own
    print(f"{label}: {wall:.1f} s in process; backends' own {own:.1f} s (load and close {load:.1f} s, encode "
          f"{encode:.1f} s); diagnosis {diagnose:.1f} s; tokparity {wall - diagnose - own:.1f} s = {overhead:.0%}",
          flush=True)
    return [Measurement(f"compare harness overhead over the backends' own time, {label}", overhead * 100, "%", "",
                        f"wall {wall:.1f} s, backends {own:.1f} s (load and close {load:.1f} + encode {encode:.1f}), "
                        f"{pairs:,} (case, backend) verdicts, {len(results.mismatches):,} mismatches")]


def whole_process(args: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one ``tokparity`` process."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", RSS_PROBE, *args], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"tokparity {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    peak = int(re.findall(r"PEAK_RSS_KB (\d+)", done.stdout)[-1])
    return wall, peak


def diagnosis_cost(rounds: int) -> list[Measurement]:
    """The default run with and without the root-cause diagnosis, whole processes, interleaved."""
    walls: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for on in ((True, False) if r % 2 == 0 else (False, True)):
                flag = [] if on else ["--no-diagnose"]
                wall, _ = whole_process(["compare", "-q", *flag, "-o", f"{tmp}/d{int(on)}-{r}"])
                walls[on].append(wall)
                print(f"round {r + 1}: tokparity compare {' '.join(flag) or '(diagnosis on)'}: {wall:.1f} s", flush=True)
        summary = json.loads(Path(f"{tmp}/d1-0/summary.json").read_text("utf-8"))
        import csv
        with open(f"{tmp}/d1-0/mismatches.csv", encoding="utf-8", newline="") as f:
            rows = [row for row in csv.DictReader(f) if row["stage"] != "decode"]
    ratio = statistics.median(on / off for on, off in zip(walls[True], walls[False]))
    reproduced = sum(1 for row in rows if row["cause"] and not row["cause"].endswith(".other"))
    located = sum(1 for row in rows if row["cause"].endswith(".other"))
    runs = [r for r in summary["runs"] if r["mismatches"]]
    proven = sum(1 for r in runs if (r.get("root_cause") or {}).get("proven"))
    explained = sum((r.get("root_cause") or {}).get("explains", 0) for r in runs)
    share = reproduced / max(1, len(rows))
    print(f"diagnosis on/off: median of the rounds' ratios {ratio:.2f}x (walls {statistics.median(walls[True]):.1f} "
          f"vs {statistics.median(walls[False]):.1f} s); {reproduced:,} of {len(rows):,} mismatches reproduced "
          f"({share:.1%}), {located:,} located (*.other); {proven} of {len(runs)} runs with a proven root cause",
          flush=True)
    return [Measurement("compare with the diagnosis / without (default run, whole process)", ratio, "ratio", "<= 1.5",
                        f"median of {rounds} interleaved rounds' ratios; wall medians "
                        f"{statistics.median(walls[True]):.1f} s vs {statistics.median(walls[False]):.1f} s; rounds "
                        f"{', '.join(f'{a / b:.2f}' for a, b in zip(walls[True], walls[False]))}"),
            Measurement("mismatches of the default run whose cause is reproduced", share * 100, "%", "",
                        f"{reproduced:,} of {len(rows):,}; {located:,} more located at a stage (*.other); the run "
                        f"verdicts reproduce {explained:,}; {proven} of {len(runs)} (model, backend) runs with a "
                        f"proven root cause")]


def same_reports(a: str, b: str) -> bool:
    """Two runs' summary.json (apart from their timings) and mismatches.csv are the same."""
    one, two = (json.loads(Path(f"{d}/summary.json").read_text("utf-8")) for d in (a, b))
    for d in (one, two):
        d.pop("seconds"), d.pop("timing")
    return one == two and Path(f"{a}/mismatches.csv").read_bytes() == Path(f"{b}/mismatches.csv").read_bytes()


def jobs_speedup(rounds: int) -> list[Measurement]:
    walls: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for jobs in ((1, 2) if r % 2 == 0 else (2, 1)):
                wall, _ = whole_process(["compare", "-q", "-j", str(jobs), "-o", f"{tmp}/j{jobs}-{r}"])
                walls[jobs].append(wall)
                print(f"round {r + 1}: tokparity compare --jobs {jobs}: {wall:.1f} s", flush=True)
        same = same_reports(f"{tmp}/j1-0", f"{tmp}/j2-0")
    m1, m2 = statistics.median(walls[1]), statistics.median(walls[2])
    # Each round's two runs are neighbours in time: their ratio is the least disturbed by a machine
    # that gets busier or calmer during the benchmark; the result is the median of those ratios.
    paired = statistics.median(one / two for one, two in zip(walls[1], walls[2]))
    print(f"--jobs 1 median {m1:.1f} s, --jobs 2 median {m2:.1f} s ({m1 / m2:.2f}x); median of the rounds' "
          f"ratios {paired:.2f}x; reports identical: {same}")
    return [Measurement("compare --jobs 2 speed / --jobs 1 (default run, whole process)", paired, "ratio", ">= 1.6",
                        f"median of {rounds} interleaved rounds' ratios; wall medians {m1:.1f} s vs {m2:.1f} s "
                        f"({m1 / m2:.2f}x) on {os.cpu_count()} cpus; rounds "
                        f"{', '.join(f'{one / two:.2f}' for one, two in zip(walls[1], walls[2]))}; "
                        f"identical reports: {'yes' if same else 'NO'}"),
            Measurement("compare --jobs 2 gives the reports of --jobs 1", 1.0 if same else 0.0, "yes=1", ">= 1")]


def scaling(rounds: int = 3) -> list[Measurement]:
    """Whole processes on the multilingual corpus 1x, 4x and 16x, interleaved for ``rounds``
    rounds; median walls (a few hundred ms apart at 1x and 4x: one run each would be noise)."""
    from tokparity.corpus import load_corpus

    base = list(load_corpus("multilingual"))
    rows = []
    factors = (1, 4, 16)
    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[int, list[tuple[float, float, int]]] = {factor: [] for factor in factors}
        for factor in factors:
            corpus = Path(tmp) / f"multilingual-x{factor}.jsonl"
            with open(corpus, "w", encoding="utf-8") as f:
                for copy in range(factor):
                    for case in base:
                        f.write(json.dumps({"id": f"{case.id}-{copy}", "text": case.text, "tags": case.tags},
                                           ensure_ascii=False) + "\n")
        for r in range(rounds):
            for factor in factors if r % 2 == 0 else factors[::-1]:
                out = Path(tmp) / f"out-{factor}-{r}"
                corpus = Path(tmp) / f"multilingual-x{factor}.jsonl"
                wall, peak = whole_process(["compare", "llama-spm", "-c", str(corpus), "-q", "-o", str(out)])
                summary = json.loads((out / "summary.json").read_text("utf-8"))
                fixed = sum(t["load"] + t.get("close", 0.0) for t in summary["timing"]["models"].values())
                runs[factor].append((wall, summary["seconds"] - fixed, peak))
        per_case, peaks = {}, {}
        for factor in factors:
            wall = statistics.median(w for w, _, _ in runs[factor])
            cases = len(base) * factor
            per_case[factor] = statistics.median(run for _, run, _ in runs[factor]) / cases
            peaks[factor] = max(p for _, _, p in runs[factor])
            print(f"llama-spm x multilingual x{factor}: {cases:,} cases, {wall:.2f} s whole process (median of "
                  f"{rounds}), {per_case[factor] * 1e3:.3f} ms/case in the run, peak RSS {peaks[factor] / 1024:.0f} MiB",
                  flush=True)
            rows.append(Measurement(f"compare llama-spm on multilingual x{factor} ({cases:,} cases)", wall, "s",
                                    detail=f"whole process, median of {rounds}; {per_case[factor] * 1e3:.3f} ms per case "
                                           f"in the run (without loading and closing); peak RSS "
                                           f"{peaks[factor] / 1024:.0f} MiB"))
    # Linear: the time per case of the run itself (summary.json's seconds less loading and closing)
    # does not grow with the corpus. (Slopes of whole-process walls were tried first: at 1x and 4x
    # the runs differ by a tenth of a second, less than the noise of starting a process.)
    rows.append(Measurement("time per case, 16x / 4x (1 = linear, below 1: fixed costs shared by more cases)",
                            per_case[16] / per_case[4], "ratio", "<= 1.5",
                            f"{per_case[1] * 1e3:.3f}, {per_case[4] * 1e3:.3f}, {per_case[16] * 1e3:.3f} ms per case "
                            f"at 1x, 4x, "
                            f"16x; peak RSS {peaks[1] / 1024:.0f} / {peaks[4] / 1024:.0f} / {peaks[16] / 1024:.0f} MiB"))
    return rows


def fuzz_rate(seconds: int) -> list[Measurement]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in ("llama-spm", "botchan-unigram"):
            done = subprocess.run([sys.executable, "-m", "tokparity", "fuzz", model, "-b", "ref", "--seconds",
                                   str(seconds), "--seed", "0", "-o", f"{tmp}/{model}"], capture_output=True, text=True)
            found = re.search(r"(\d+) cases in ([\d.]+) s", done.stdout + done.stderr)
            if found is None:
                raise SystemExit(f"fuzz {model}: no case count in its output: {(done.stdout + done.stderr)[-2000:]}")
            cases, spent = int(found.group(1)), float(found.group(2))
            print(f"fuzz {model} -b ref: {cases:,} cases in {spent:.0f} s = {cases / spent:,.0f} cases/s", flush=True)
            rows.append(Measurement(f"fuzz {model} -b ref (vs its oracle)", cases / spent, "cases/s",
                                    detail=f"{cases:,} cases in {spent:.0f} s, seed 0"))
    return rows


def regress_on_ray(rounds: int) -> list[Measurement]:
    """``regress`` over the committed goldens (every model and corpus, add_special off and on) in
    one process and with ``--ray`` (a Ray started here, a task per model), interleaved rounds."""
    walls: dict[str, list[float]] = {"one": [], "ray": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for how in (("one", "ray") if r % 2 == 0 else ("ray", "one")):
                wall, _ = whole_process(["regress", "-q", *(["--ray"] if how == "ray" else []),
                                         "-o", f"{tmp}/{how}-{r}"])
                walls[how].append(wall)
                print(f"round {r + 1}: tokparity regress {'--ray' if how == 'ray' else '(one process)'}: "
                      f"{wall:.1f} s", flush=True)
        same = same_reports(f"{tmp}/one-0", f"{tmp}/ray-0")
    ratios = [one / ray for one, ray in zip(walls["one"], walls["ray"])]
    m1, m2 = statistics.median(walls["one"]), statistics.median(walls["ray"])
    return [Measurement("regress --ray speed / one process (committed goldens, a Ray started here)",
                        statistics.median(ratios), "ratio", ">= 1.2",
                        f"median of {rounds} interleaved rounds' ratios; wall medians {m1:.1f} s vs {m2:.1f} s on "
                        f"{os.cpu_count()} cpus (the Ray's start included); rounds "
                        f"{', '.join(f'{x:.2f}' for x in ratios)}; identical reports: {'yes' if same else 'NO'}"),
            Measurement("regress --ray gives the reports of one process", 1.0 if same else 0.0, "yes=1", ">= 1")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fuzz-seconds", type=int, default=20)
    parser.add_argument("--repeat", type=int, help="(nox -s bench passes it to every script; unused here)")
    args = parser.parse_args()
    rows = harness_overhead() + diagnosis_cost(max(3, args.rounds // 2 * 2 - 1)) + jobs_speedup(args.rounds) + \
        scaling() + fuzz_rate(args.fuzz_seconds) + regress_on_ray(3)
    return 0 if save("compare", rows, "compare: harness overhead, diagnosis, --jobs, scaling, fuzzing, regress --ray") \
        else 1


if __name__ == "__main__":
    sys.exit(main())
