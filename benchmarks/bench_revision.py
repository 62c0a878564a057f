"""The default run of this checkout against an earlier revision of tokparity, whole processes.

    python benchmarks/bench_revision.py [--base 8827300] [--rounds 5]

The base is checked out beside this one (``git worktree``), and both trees are byte-compiled, as an
installed package is. Each round runs ``tokparity compare`` once per tree, with the diagnosis and
without it (``--no-diagnose``); odd rounds run the base first, even rounds this checkout first, so a
machine that slows down within a round weighs on both. The result is the median of the rounds'
ratios (this checkout's wall time over the base's); the CPU time of each process and its children
is beside it. The load average at each round's start is said: on a shared machine single runs
drift by a third within minutes, so read the ratios, not the seconds.

The default base, 8827300, is the last revision before the one pipeline (issue 54 asks that
nothing gets slower). Target: <= 1.0 (no slower than the base).
Results: reports/bench/revision.json and .md (benchlib). Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import Measurement, save  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BEFORE_THE_PIPELINE = "8827300"


def _tree(base: str, folder: Path) -> Path:
    tree = folder / "base"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(tree), base], check=True,
                   stdout=subprocess.DEVNULL)
    return tree


def _compile(tree: Path) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "tokparity")], check=True,
                   stdout=subprocess.DEVNULL)


def _run(tree: Path, diagnose: bool, out: Path) -> tuple[float, float]:
    """One ``tokparity compare`` of the default run from ``tree``: its wall and CPU seconds."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(tree)
    argv = [sys.executable, "-P", "-m", "tokparity", "compare", "-q", "-o", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv + ([] if diagnose else ["--no-diagnose"]), env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BEFORE_THE_PIPELINE, help="the revision to measure against")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="tokparity-bench-revision-") as tmp:
        folder = Path(tmp)
        base = _tree(args.base, folder)
        try:
            trees = {"base": base, "this": ROOT}
            for tree in trees.values():
                _compile(tree)
            seen: dict[bool, list[dict[str, tuple[float, float]]]] = {True: [], False: []}
            loads = []
            for n in range(args.rounds):
                loads.append(os.getloadavg()[0])
                order = ("base", "this") if n % 2 == 0 else ("this", "base")
                for diagnose in (True, False):
                    seen[diagnose].append({who: _run(trees[who], diagnose, folder / f"out-{who}") for who in order})
                print(f"round {n + 1} of {args.rounds}: " + ", ".join(
                    f"{'diagnosis' if d else 'no diagnosis'} {r[-1]['this'][0] / r[-1]['base'][0]:.3f}x"
                    for d, r in seen.items()), flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for diagnose, rounds in seen.items():
        walls = [r["this"][0] / r["base"][0] for r in rounds]
        cpus = [r["this"][1] / r["base"][1] for r in rounds]
        what = "with the diagnosis" if diagnose else "without the diagnosis (--no-diagnose)"
        rows.append(Measurement(
            f"default run {what}: this checkout / {args.base}, wall", statistics.median(walls), "ratio", "<= 1.0",
            f"{args.rounds} interleaved rounds; the rounds' ratios {', '.join(f'{w:.3f}' for w in walls)}; median "
            f"walls {statistics.median(r['base'][0] for r in rounds):.1f} s and "
            f"{statistics.median(r['this'][0] for r in rounds):.1f} s; CPU ratio {statistics.median(cpus):.3f}; "
            f"load average at each round's start {', '.join(f'{x:.2f}' for x in loads)}"))
    return 0 if save("revision", rows, f"The default run against {args.base}") else 1


if __name__ == "__main__":
    sys.exit(main())
