"""How fast the backends are, against the obvious alternatives.

    python benchmarks/bench_backends.py [--model llama-spm] [--repeat 7]

1. The llama.cpp backend vs ``Llama.tokenize`` line by line, on the lines of SentencePiece's
   ``test/botchan.txt`` (target: at least 1.5x as fast).
2. The ``cmd:`` protocol's cost per case over the engine's own time (target: at most 50 µs), one
   request at a time (``encode``) and pipelined (``encode_many``, what ``compare`` uses). The
   engine is examples/engines/llamacpp_engine.py with ``--timing``: each reply carries
   ``engine_seconds``, the time its ``llama_tokenize`` call took. The cost is the wall time of the
   whole batch minus the sum of those, per case, so it includes everything else on both sides:
   our request formatting, the pipes' system calls, the program's ``json.loads`` and
   ``json.dumps``, our JSON decoding of the reply, and the waits while a sleeping process is woken
   (one request at a time: two per case, each way; pipelined: the two work side by side).
   For scale, the floor of one request at a time on this machine is measured too: two processes
   taking turns over a pipe with no JSON at all, the child busy for the engine's median time
   per case before it answers, the parent waiting as the backend waits (the wake-ups alone).
3. For information: the same llama.cpp backend in a child process (``isolate=True``).

Medians of ``--repeat`` runs (the cmd: ones interleaved round by round, so a machine that gets
busier during the run does not favour one path). Not a unit test: numbers depend on the machine.
Saved through benchlib (reports/bench/backends.{json,md}); exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib, beside this file

from benchlib import Measurement, save  # noqa: E402

from tokparity.backends.registry import make_backend  # noqa: E402
from tokparity.zoo import resolve_model, zoo_text  # noqa: E402

EXAMPLE_ENGINE = Path(__file__).resolve().parents[1] / "examples" / "engines" / "llamacpp_engine.py"


@contextlib.contextmanager
def quiet_stderr():
    """``Llama(..., verbose=False)`` still prints a line to fd 2."""
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(fns: dict, repeat: int) -> dict[str, list[float]]:
    """Each function once per round, the order rotating, so a machine that gets busier or
    calmer during the run does not favour one of them."""
    names = list(fns)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeat):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name].append(timed(fns[name]))
    return times


def bench_llamacpp(model, lines: list[str], repeat: int) -> list[Measurement]:
    import llama_cpp

    with quiet_stderr():
        llm = llama_cpp.Llama(model_path=str(model.files["gguf"]), vocab_only=True, verbose=False)
    backend = make_backend("llama.cpp", model)
    encoded = [line.encode("utf-8") for line in lines]

    def high_level():
        return [llm.tokenize(b, add_bos=False, special=False) for b in encoded]

    def ours():
        return [backend.encode(line, False, False) for line in lines]

    def ours_with_notes():
        return [backend.encode_with_notes(line, False, False) for line in lines]

    assert high_level() == ours(), "the two disagree: the benchmark would compare different work"
    times = interleaved({"high": high_level, "ours": ours, "notes": ours_with_notes}, repeat)
    n = len(lines)
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = statistics.median(h / o for h, o in zip(times["high"], times["ours"]))
    ratio_notes = statistics.median(h / o for h, o in zip(times["high"], times["notes"]))
    print(f"llama.cpp on {model.name}, {n} lines of botchan.txt (median of {repeat} interleaved rounds)")
    print(f"  Llama.tokenize line by line         {med['high'] * 1e3:7.1f} ms  {med['high'] / n * 1e6:6.2f} µs/line")
    print(f"  llama.cpp backend .encode           {med['ours'] * 1e3:7.1f} ms  {med['ours'] / n * 1e6:6.2f} µs/line"
          f"  {ratio:4.2f}x as fast  (target >= 1.5x)")
    print(f"  llama.cpp backend .encode_with_notes{med['notes'] * 1e3:7.1f} ms  {med['notes'] / n * 1e6:6.2f} µs/line"
          f"  {ratio_notes:4.2f}x as fast")
    backend.close()
    return [Measurement("llama.cpp backend speed / Llama.tokenize line by line", ratio, "ratio", ">= 1.5",
                        f"{med['ours'] / n * 1e6:.2f} vs {med['high'] / n * 1e6:.2f} µs/line, {n} botchan lines, "
                        f"median of {repeat} interleaved rounds"),
            Measurement("llama.cpp backend with notes (llama.cpp's warnings kept) / Llama.tokenize", ratio_notes,
                        "ratio", "", f"{med['notes'] / n * 1e6:.2f} µs/line")]


_TURNS_CHILD = r"""
import os, sys, time
work = float(sys.argv[1])
while line := os.read(0, 1 << 16):
    end = time.perf_counter() + work
    while time.perf_counter() < end:
        pass
    os.write(1, line)
"""


class TakingTurns:
    """A child that answers each line after ``work`` seconds busy, and nothing else: what two
    processes taking turns cost here, waiting as the ``cmd:`` backend waits."""

    def __init__(self, work: float):
        self.work = work
        self.proc = subprocess.Popen([sys.executable, "-c", _TURNS_CHILD, repr(work)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.fd_in, self.fd_out = self.proc.stdin.fileno(), self.proc.stdout.fileno()

    def run(self, n: int) -> float:
        """Seconds per round trip beyond the child's work, waiting as the backend waits: looking
        for the reply for up to ``_SPIN_SECONDS``, then asleep in ``poll``."""
        from tokparity.backends.engine_process import _SPIN_SECONDS

        poller = select.poll()
        poller.register(self.fd_out, select.POLLIN)
        line = b'{"id": 1, "op": "encode", "text": "a line of about the length of a line of botchan.txt"}\n'
        clock = time.perf_counter
        start = clock()
        for _ in range(n):
            os.write(self.fd_in, line)
            spin_until = clock() + _SPIN_SECONDS
            while not poller.poll(0) and clock() < spin_until:
                pass
            poller.poll(10_000)
            os.read(self.fd_out, 1 << 16)
        return (clock() - start) / n - self.work

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def bench_cmd(model, lines: list[str], repeat: int) -> list[Measurement]:
    from tokparity.backends.requests import encode_body

    backend = make_backend(f"cmd:{{python}} {EXAMPLE_ENGINE} {{gguf}} --timing", model)
    engine = backend.engine
    bodies = [encode_body(line, False, False) for line in lines]
    backend.encode("warm up")
    n = len(lines)
    engine_seconds = [engine.request(b, backend.timeout)[0]["engine_seconds"] for b in bodies]
    turns = TakingTurns(statistics.median(engine_seconds))

    def one_by_one():
        return [engine.request(b, backend.timeout)[0]["engine_seconds"] for b in bodies]

    def pipelined():
        return [reply["engine_seconds"] for reply, _junk, _s in engine.request_many(bodies, backend.timeout)]

    def validated():
        return [0.0 for _ in backend.encode_many(lines)]

    paths = {"one request at a time (encode)": one_by_one, "pipelined (encode_many)": pipelined,
             "encode_many, replies validated": validated}
    walls: dict[str, list[float]] = {name: [] for name in paths}
    costs: dict[str, list[float]] = {name: [] for name in paths}
    engine_own: dict[str, list[float]] = {name: [] for name in paths}
    floor = []
    names = list(paths)
    for r in range(repeat):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = time.perf_counter()
            engine_total = sum(paths[name]())
            wall = time.perf_counter() - start
            walls[name].append(wall / n)
            costs[name].append((wall - engine_total) / n)
            engine_own[name].append(engine_total / n)
        floor.append(turns.run(min(n, 2000)))
    turns.close()
    backend.close()
    med = {name: (statistics.median(walls[name]) * 1e6, statistics.median(costs[name]) * 1e6,
                  statistics.median(engine_own[name]) * 1e6) for name in paths}
    floor_us = statistics.median(floor) * 1e6
    print(f"cmd: protocol, {n} lines through examples/engines/llamacpp_engine.py (median of {repeat} interleaved "
          "rounds)")
    for name in names[:2]:
        wall, cost, own = med[name]
        print(f"  {name:32} {wall:6.1f} µs/case wall, engine's own {own:5.1f}, {cost:5.1f} µs/case over it"
              "  (target <= 50)")
    print(f"  {names[2]:32} {med[names[2]][0]:6.1f} µs/case wall")
    print(f"  two processes taking turns, no JSON: {floor_us:5.1f} µs per round trip beyond the child's work "
          f"({turns.work * 1e6:.0f} µs busy)")
    (single_wall, single, single_own), (many_wall, many, many_own) = med[names[0]], med[names[1]]
    rounds = f"{n} botchan lines, median of {repeat} interleaved rounds"
    return [Measurement("cmd: protocol cost per case over the engine's own time, pipelined (encode_many, what "
                        "compare uses)", many, "µs/case", "<= 50",
                        f"{many_wall:.1f} µs/case wall, engine's own {many_own:.1f}; {rounds}"),
            Measurement("cmd: protocol cost per case over the engine's own time, one request at a time (encode)",
                        single, "µs/case", "<= 50",
                        f"{single_wall:.1f} µs/case wall, engine's own {single_own:.1f}; two processes taking "
                        f"turns with no JSON cost {floor_us:.1f} µs of that here; {rounds}"),
            Measurement("two processes taking turns over a pipe, no JSON (the floor of one request at a time)",
                        floor_us, "µs/round trip", "",
                        f"beyond the child's {turns.work * 1e6:.0f} µs of work (the engine's median), waiting as the "
                        "cmd: backend waits"),
            Measurement("cmd: backend.encode_many with every reply validated", med[names[2]][0], "µs/case wall")]


def bench_isolated(model, lines: list[str], repeat: int) -> list[Measurement]:
    child = make_backend("llama.cpp", model, isolate=True)
    here = make_backend("llama.cpp", model)
    times = interleaved({"child": lambda: [child.encode(line) for line in lines],
                         "many": lambda: child.encode_many(lines),
                         "here": lambda: [here.encode(line) for line in lines]}, repeat)
    n = len(lines)
    med = {k: statistics.median(v) / n * 1e6 for k, v in times.items()}
    print(f"llama.cpp in a child process (isolate=True), {n} lines (median of {repeat})")
    print(f"  one at a time {med['child']:6.1f} µs/case, pipelined {med['many']:6.1f} µs/case, "
          f"in process {med['here']:5.2f} µs/case")
    child.close()
    here.close()
    return [Measurement("llama.cpp in a child process (a file of yours), pipelined (encode_many)", med["many"],
                        "µs/case wall", detail=f"{med['many'] - med['here']:.1f} µs/case more than in process "
                        f"({med['here']:.2f}); {n} botchan lines, median of {repeat}"),
            Measurement("llama.cpp in a child process, one request at a time (encode)", med["child"], "µs/case wall",
                        detail=f"{med['child'] - med['here']:.1f} µs/case more than in process")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llama-spm", help="a zoo model with a GGUF (default: llama-spm)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    model = resolve_model(args.model)
    lines = zoo_text("botchan").read_text("utf-8").split("\n")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}")
    rows = bench_llamacpp(model, lines, args.repeat)
    rows += bench_cmd(model, lines, max(3, args.repeat))
    rows += bench_isolated(model, lines, max(3, args.repeat // 2))
    return 0 if save("backends", rows, f"Backends on {args.model}: llama.cpp, the cmd: protocol, a child process") else 1


if __name__ == "__main__":
    sys.exit(main())
