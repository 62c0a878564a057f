"""How fast the backends are, against the obvious alternatives.

    python benchmarks/bench_backends.py [--model llama-spm] [--repeat 7]

1. The llama.cpp backend vs ``Llama.tokenize`` line by line, on the lines of SentencePiece's
   ``test/botchan.txt`` (target: at least 1.5x as fast).
2. The ``cmd:`` protocol's cost per case over the engine's own time (target: at most 50 µs).
   The engine is examples/engines/llamacpp_engine.py with ``--timing``: each reply carries the
   seconds the engine spent between reading the request and writing the reply; everything else
   (pipes, wake-ups, JSON on our side, the reply's serialization on its side) is the protocol's.
3. For information: the same llama.cpp backend in a child process (``isolate=True``).

Medians of ``--repeat`` runs. Not a unit test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
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


def bench_cmd(model, lines: list[str], repeat: int) -> list[Measurement]:
    from tokparity.backends.cmd import encode_body

    backend = make_backend(f"cmd:{{python}} {EXAMPLE_ENGINE} {{gguf}} --timing", model)
    engine = backend.engine
    bodies = [encode_body(line, False, False) for line in lines]
    backend.encode("warm up")
    n = len(lines)

    def one_by_one():
        return [engine.request(b, backend.timeout)[0]["engine_seconds"] for b in bodies]

    def pipelined():
        return [reply["engine_seconds"] for reply, _junk, _s in engine.request_many(bodies, backend.timeout)]

    rows = {}
    for name, fn in (("one request at a time (encode)", one_by_one), ("pipelined (encode_many)", pipelined)):
        costs, walls = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            engine_total = sum(fn())
            wall = time.perf_counter() - start
            walls.append(wall / n)
            costs.append((wall - engine_total) / n)
        rows[name] = (statistics.median(walls), statistics.median(costs))
    print(f"cmd: protocol, {n} lines through examples/engines/llamacpp_engine.py (median of {repeat})")
    for name, (wall, cost) in rows.items():
        print(f"  {name:32} {wall * 1e6:6.1f} µs/case wall, {cost * 1e6:5.1f} µs/case over the engine's own time"
              "  (target <= 50)")
    t = statistics.median(timed(lambda: backend.encode_many(lines)) for _ in range(repeat))
    print(f"  backend.encode_many (validated)  {t / n * 1e6:6.1f} µs/case wall")
    backend.close()
    (single_wall, single), (many_wall, many) = rows.values()
    return [Measurement("cmd: protocol cost per case over the engine's own time, pipelined (encode_many, what "
                        "compare uses)", many * 1e6, "µs/case", "<= 50",
                        f"{many_wall * 1e6:.1f} µs/case wall, {n} botchan lines, median of {repeat}"),
            Measurement("cmd: protocol cost per case, one request at a time (encode)", single * 1e6, "µs/case", "",
                        f"{single_wall * 1e6:.1f} µs/case wall: two processes taking turns on the CPUs"),
            Measurement("cmd: backend.encode_many with every reply validated", t / n * 1e6, "µs/case wall")]


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
    return [Measurement("llama.cpp in a child process (a file of yours), pipelined", med["many"], "µs/case",
                        detail=f"one at a time {med['child']:.1f} µs/case; in process {med['here']:.2f} µs/case")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llama-spm", help="a zoo model with a GGUF (default: llama-spm)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    model = resolve_model(args.model)
    lines = zoo_text("botchan").read_text("utf-8").split("\n")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}")
    rows = bench_llamacpp(model, lines, args.repeat)
    rows += bench_cmd(model, lines, max(3, args.repeat // 2))
    rows += bench_isolated(model, lines, max(3, args.repeat // 2))
    return 0 if save("backends", rows, f"Backends on {args.model}: llama.cpp, the cmd: protocol, a child process") else 1


if __name__ == "__main__":
    sys.exit(main())
