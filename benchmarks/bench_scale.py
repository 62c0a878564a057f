"""compare on a corpus of a gigabyte: one process, ``--jobs 2`` and a local two-node Ray cluster.

    python benchmarks/bench_scale.py [--scale-mb 1024] [--small-mb 20] [--seed 0] [--scale-rounds 1]

(or ``TOKPARITY_BENCH_SCALE_MB=50``; ``nox -s bench`` runs the default size.)

1. The corpus: ``scale_corpus.py`` writes a deterministic Parquet file of web-text-sized documents
   (built-in corpora and generators) once per seed and size, kept in the work directory
   (``$TOKPARITY_BENCH_WORK``, default ``reports/bench/work``); how long writing it took is
   reported, or that it was already there.
2. ``tokparity compare MODEL -c CORPUS --text-column text --id-column id -b A -b B -q`` as a whole
   process, three ways: ``--jobs 1``, ``--jobs 2``, and ``--ray ADDRESS`` against a cluster of two
   Ray nodes of one CPU each started on this machine (``ray start --head`` and ``ray start
   --address``). For each: wall time, MB/s (of UTF-8 text) and cases/s, the driver's CPU seconds
   and peak RSS (its own ``VmHWM``, read as it exits), and the peak RSS of every other process of
   the run (``VmHWM`` sampled from /proc: the ``--jobs`` workers, the cluster's ``ray::`` workers
   and its raylets). Ratios: ``--jobs 2`` / one process, Ray / one process. The three runs must
   give the same counts (summary.json's runs and tag rates, mismatches.csv).
   When the checkout's ``compare`` has no ``--ray``, or Ray is not installed, or the cluster does
   not start, the Ray rows say "not measured" and why; the benchmark does not fail for it.
3. The driver's ceiling: cases per second of the driver's own CPU time, in the ``--jobs 2`` run
   (it receives, counts and journals the workers' records) and in the Ray run (it also reads the
   corpus and ships the cases): however many workers, a run cannot go faster than its driver.
   Marginal: the same configuration on the small corpus is taken off, and with it what does not
   grow with the corpus (start-up, the reports).
4. The pure-Python reference on the small corpus (the first documents of the same seed):
   ``-b ref`` beside the pair, in one process; ``ref``'s MB/s against each native backend's,
   from the seconds each spent encoding.

The cluster is stopped by ending its own processes (those whose command line names its
temporary directory, and their children), not with ``ray stop --force``, which would end every
Ray cluster on the machine, other users' too.

Results: reports/bench/scale.json and .md (benchlib). Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchlib and scale_corpus, beside this file

from benchlib import OUT, Measurement, save  # noqa: E402
from scale_corpus import cached_corpus  # noqa: E402

# Native backends that agree on every document and run a gigabyte in minutes here; measured
# against the other candidates on the small corpus (docs/benchmarks.md).
MODEL, BACKENDS = "llama-spm", ("sentencepiece", "llama.cpp")
RUN_TIMEOUT = 4 * 3600
MiB = 1 << 20

# The driver's own figures, printed as it exits: VmHWM (ru_maxrss is carried over exec from the
# forking parent) and its CPU seconds (RUSAGE_SELF: this process's threads, not its children).
DRIVER_PROBE = (
    "import re, resource, sys\nfrom tokparity.cli import main\ncode = main(sys.argv[1:])\n"
    "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
    "try:\n    peak = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
    "except (OSError, AttributeError):\n    peak = usage.ru_maxrss\n"
    "print('DRIVER', peak, usage.ru_utime + usage.ru_stime, flush=True)\nsys.exit(code)")


# ---------------------------------------------------------------------------------------------
# Processes, read from /proc (psutil is not a dependency)

@dataclass
class Proc:
    pid: int
    ppid: int
    cmd: str
    hwm_kb: int = 0
    cpu_s: float = 0.0
    zombie: bool = False  # exited, not yet reaped: nothing left to end or measure


_TICKS = os.sysconf("SC_CLK_TCK")


def read_proc(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("utf-8", "replace")
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as f:
            status = f.read()
    except OSError:  # gone, or not ours to read
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces
    found = re.search(r"VmHWM:\s+(\d+)", status)
    return Proc(pid, int(fields[1]), cmd, int(found.group(1)) if found else 0,
                (int(fields[11]) + int(fields[12])) / _TICKS, fields[0] in ("Z", "X"))


def all_procs() -> dict[int, Proc]:
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (p := read_proc(int(name))) is not None:
            procs[p.pid] = p
    return procs


def descendants(procs: dict[int, Proc], roots: set[int]) -> set[int]:
    found, grew = set(roots) & set(procs), True
    while grew:
        more = {pid for pid, p in procs.items() if p.ppid in found and pid not in found}
        found |= more
        grew = bool(more)
    return found


class PeakSampler(threading.Thread):
    """Every process of a run, sampled twice a second while it runs: the last ``VmHWM`` seen (the
    kernel's own high-water mark, so only growth in a process's last half second escapes) and
    CPU seconds. A run's processes: the driver's descendants, and those of the Ray cluster whose
    command lines name ``cluster_marker`` (its temporary directory), with their children. Made
    before the driver starts: the CPU seconds the cluster's processes had spent by then (starting
    the cluster) are not the run's."""

    def __init__(self, cluster_marker: str | None):
        super().__init__(daemon=True)
        self.driver_pid, self.marker = 0, cluster_marker
        self.seen: dict[int, Proc] = {}
        self.stop_event = threading.Event()
        self.cpu_before: dict[int, float] = {}
        if cluster_marker:
            procs = all_procs()
            self.cpu_before = {pid: procs[pid].cpu_s for pid in self.cluster_pids(procs)}

    def cluster_pids(self, procs: dict[int, Proc]) -> set[int]:
        if not self.marker:
            return set()
        return descendants(procs, {pid for pid, p in procs.items() if self.marker in p.cmd})

    def watch(self, driver_pid: int) -> None:
        self.driver_pid = driver_pid
        self.start()

    def run(self) -> None:
        while not self.stop_event.is_set():
            self.sample()
            self.stop_event.wait(0.5)

    def sample(self) -> None:
        procs = all_procs()
        for pid in descendants(procs, {self.driver_pid}) | self.cluster_pids(procs):
            p = procs[pid]
            old = self.seen.get(pid)
            # A Ray worker renames itself (``ray::IDLE``, then ``ray::ClassName``), and a process that has
            # exited (a zombie) has no command line: keep the most telling name seen.
            cmd = old.cmd if old is not None and (not p.cmd or old.cmd.startswith("ray::") and
                                                  not p.cmd.startswith("ray::")) else p.cmd
            cpu = p.cpu_s - self.cpu_before.get(pid, 0.0) if not p.zombie else old.cpu_s if old else 0.0
            self.seen[pid] = Proc(pid, p.ppid, cmd, max(p.hwm_kb, old.hwm_kb if old else 0), cpu)

    def finish(self) -> dict[int, Proc]:
        self.stop_event.set()
        self.join()
        return self.seen


def role(p: Proc, driver_pid: int) -> str:
    if p.pid == driver_pid:
        return "driver"
    if p.cmd.startswith("ray::"):  # Ray's own agents are named so too
        return "ray agent" if p.cmd.endswith("Agent") else "ray worker"
    for name in ("raylet", "gcs_server", "dashboard", "agent", "log_monitor", "monitor"):
        if name in p.cmd.split(" ")[0] or f"/{name}" in p.cmd:
            return f"ray {name}"
    return "worker" if "tokparity" in p.cmd or "parallel" in p.cmd else "other"


# ---------------------------------------------------------------------------------------------
# One run of compare

@dataclass
class Run:
    label: str
    wall: float
    driver_kb: int
    driver_cpu: float
    others: list[tuple[str, Proc]]  # (role, process) of every process of the run but the driver
    summary: dict
    mismatches_csv: bytes
    cases: int = field(init=False)

    def __post_init__(self):
        self.cases = max((r["cases"] for r in self.summary["runs"]), default=0)

    @property
    def cpu(self) -> float:
        """CPU seconds of every process of the run (the driver's, its workers', the cluster's during the run)."""
        return self.driver_cpu + sum(p.cpu_s for _, p in self.others)

    def counts(self) -> dict:
        """What three ways of running the same comparison must agree on."""
        return {"runs": self.summary["runs"], "tag_rates": self.summary["tag_rates"],
                "complete": self.summary.get("complete"), "mismatches.csv": self.mismatches_csv.decode("utf-8")}


def run_compare(label: str, corpus: Path, out: Path, extra: list[str], cluster_marker: str | None = None,
                backends: tuple[str, ...] = BACKENDS, diagnose: bool = True, env: dict | None = None) -> Run:
    args = ["compare", MODEL, "-c", str(corpus), "--text-column", "text", "--id-column", "id",
            *[a for b in backends for a in ("-b", b)], "-o", str(out), "-q", *extra,
            *([] if diagnose else ["--no-diagnose"])]
    print(f"{label}: tokparity {' '.join(args)}", flush=True)
    started = time.perf_counter()
    sampler = PeakSampler(cluster_marker)
    process = subprocess.Popen([sys.executable, "-c", DRIVER_PROBE, *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    sampler.watch(process.pid)
    try:
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        seen = sampler.finish()
    wall = time.perf_counter() - started
    if process.returncode not in (0, 1) or "DRIVER" not in stdout:
        raise SystemExit(f"{label}: tokparity {' '.join(args)} failed ({process.returncode}): {stderr[-3000:]}")
    peak, cpu = re.findall(r"DRIVER (\d+) ([\d.]+)", stdout)[-1]
    others = sorted(((role(p, process.pid), p) for p in seen.values() if p.pid != process.pid),
                    key=lambda rp: (rp[0], rp[1].pid))
    run = Run(label, wall, int(peak), float(cpu), others, json.loads((out / "summary.json").read_text("utf-8")),
              (out / "mismatches.csv").read_bytes())
    print(f"  {wall:.1f} s, {run.cases:,} cases; driver {run.driver_kb / 1024:.0f} MiB peak, {run.driver_cpu:.1f} s "
          f"CPU; others: {', '.join(f'{r} {p.hwm_kb / 1024:.0f} MiB' for r, p in others if p.hwm_kb) or 'none'}",
          flush=True)
    return run


# ---------------------------------------------------------------------------------------------
# A local two-node Ray cluster

def has_ray_flag() -> str:
    """Why ``compare --ray`` cannot be measured here, or "" when it can."""
    shown = subprocess.run([sys.executable, "-m", "tokparity", "compare", "--help"], capture_output=True, text=True)
    if "--ray" not in shown.stdout:
        return "this checkout's `tokparity compare` has no --ray option"
    try:
        import ray  # noqa: F401
    except ImportError:
        return "Ray is not installed (pip install 'tokparity[ray]')"
    return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalCluster:
    """``ray start --head --num-cpus=1`` and a second node ``ray start --address=... --num-cpus=1``
    on this machine, in a temporary directory of its own; stopped by ending its own processes."""

    def __init__(self):
        # Short: Ray's unix sockets live under it, and a socket path has at most 107 bytes.
        self.temp_dir = tempfile.mkdtemp(prefix="tpb.", dir="/tmp")
        self.address = f"127.0.0.1:{free_port()}"
        self.ray = str(Path(sys.executable).with_name("ray"))
        # A token of its own, given to its nodes and to the driver: Ray 2.5x turns token auth on by
        # itself when ~/.ray/auth_token exists (a local ray.init() writes one), and a node or a
        # driver that does not hold the cluster's token is refused.
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
                    "RAY_AUTH_TOKEN": secrets.token_hex(32)}

    def start(self) -> None:
        port = self.address.rsplit(":", 1)[1]
        common = ["--num-cpus=1", "--disable-usage-stats"]
        for args in ([self.ray, "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1",
                      f"--temp-dir={self.temp_dir}", "--include-dashboard=false", *common],
                     [self.ray, "start", f"--address={self.address}", "--node-ip-address=127.0.0.1", *common]):
            try:
                done = subprocess.run(args, capture_output=True, text=True, env=self.env, timeout=180)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise RuntimeError(f"{' '.join(args[1:3])}: {e}") from None
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(args[1:3])} failed ({done.returncode}): "
                                   f"{(done.stderr or done.stdout).strip()[-600:]}")

    def __enter__(self) -> LocalCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def run(self, label: str, corpus: Path, out: Path) -> Run:
        return run_compare(label, corpus, out, ["--ray", self.address], cluster_marker=self.temp_dir, env=self.env)

    def pids(self) -> set[int]:
        procs = all_procs()
        ours = descendants(procs, {pid for pid, p in procs.items() if self.temp_dir in p.cmd}) - {os.getpid()}
        return {pid for pid in ours if not procs[pid].zombie}

    def alive(self, known: set[int]) -> set[int]:
        found = {pid for pid in known if (p := read_proc(pid)) is not None and not p.zombie}
        return found | self.pids()

    def stop(self) -> None:
        """SIGTERM to every process of this cluster, SIGKILL to those left after 5 s. The processes
        found first are followed by pid: a worker whose raylet is gone has lost its way back here."""
        targets = self.pids()
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
            alive = self.alive(targets)
            for pid in alive:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            deadline = time.monotonic() + wait
            while alive and time.monotonic() < deadline:
                time.sleep(0.2)
                alive = self.alive(targets)
            if not alive:
                break
        shutil.rmtree(self.temp_dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# The measurements

def text_mb(info: dict) -> float:
    return info["text_bytes"] / 1e6


def corpus_rows(info: dict, small: dict) -> list[Measurement]:
    how = "already written (cached)" if info.get("cached") else "written in this run"
    return [Measurement(f"scale corpus: {info['documents']:,} documents, seed {info['seed']}", text_mb(info), "MB",
                        detail=f"{info['text_bytes']:,} bytes of UTF-8 text, {info['file_bytes'] / MiB:,.0f} MiB of "
                               f"Parquet (zstd); {how}; writing it took {info['seconds']:.0f} s "
                               f"({text_mb(info) / max(info['seconds'], 0.1):.1f} MB/s); small corpus: "
                               f"{small['documents']:,} documents, {text_mb(small):.1f} MB")]


def by_role(others: list[tuple[str, Proc]]) -> str:
    """``ray worker x2: 202, 187 MiB (2.3, 1.7 s CPU)``, one entry per role."""
    roles: dict[str, list[Proc]] = {}
    for r, p in others:
        if p.hwm_kb:
            roles.setdefault(r, []).append(p)
    return "; ".join(f"{r} x{len(ps)}: {', '.join(f'{p.hwm_kb / 1024:.0f}' for p in ps)} MiB "
                     f"({', '.join(f'{p.cpu_s:.1f}' for p in ps)} s CPU)" for r, ps in sorted(roles.items())) or "none"


def run_rows(run: Run, mb: float) -> list[Measurement]:
    workers = [p for r, p in run.others if r in ("worker", "ray worker")]
    infra = [p for r, p in run.others if r not in ("worker", "ray worker")]
    rows = [Measurement(f"compare, {run.label}: throughput", mb / run.wall, "MB/s",
                        detail=f"{mb:,.0f} MB in {run.wall:.1f} s wall, whole process; {run.cpu:.1f} s of CPU "
                               f"in all its processes"),
            Measurement(f"compare, {run.label}: cases", run.cases / run.wall, "cases/s",
                        detail=f"{run.cases:,} cases"),
            Measurement(f"compare, {run.label}: peak RSS of the driver", run.driver_kb / 1024, "MiB",
                        detail=f"its CPU {run.driver_cpu:.1f} s")]
    if workers:
        rows.append(Measurement(f"compare, {run.label}: peak RSS of the largest worker",
                                max(p.hwm_kb for p in workers) / 1024, "MiB", detail=by_role(run.others)))
    if infra:
        rows.append(Measurement(f"compare, {run.label}: the cluster's own processes, peak RSS summed",
                                sum(p.hwm_kb for p in infra) / 1024, "MiB",
                                detail=f"{len(infra)} processes (raylets, GCS, agents, monitors), "
                                       f"{sum(p.cpu_s for p in infra):.1f} s CPU during the run"))
    return rows


def median_run(runs: list[Run]) -> Run:
    return sorted(runs, key=lambda r: r.wall)[len(runs) // 2]


def ratio_row(name: str, runs: list[Run], base: list[Run], target: str) -> Measurement:
    """Speed of ``runs`` over ``base``: the median of the rounds' ratios (each round's runs are neighbours in time)."""
    ratios = [b.wall / r.wall for r, b in zip(runs, base)]
    return Measurement(name, statistics.median(ratios), "ratio", target,
                       f"median of {len(ratios)} round(s): {', '.join(f'{x:.2f}' for x in ratios)}; walls "
                       f"{statistics.median(r.wall for r in base):.1f} s vs {statistics.median(r.wall for r in runs):.1f}"
                       f" s on {os.cpu_count()} cpus")


def cpu_row(name: str, runs: list[Run], base: list[Run], target: str) -> Measurement:
    """CPU seconds of all the processes of ``runs`` over ``base``'s: what spreading the work costs, which
    (unlike the wall ratio) does not depend on what else the shared machine runs at the time."""
    ratios = [r.cpu / b.cpu for r, b in zip(runs, base)]
    ratio = statistics.median(ratios)
    return Measurement(name, ratio, "ratio", target, f"median of {len(ratios)} round(s): "
                       f"{', '.join(f'{x:.2f}' for x in ratios)}; {statistics.median(b.cpu for b in base):.1f} s vs "
                       f"{statistics.median(r.cpu for r in runs):.1f} s: on two idle cores at best "
                       f"{2 / ratio:.2f}x one process")


def reference_rows(small: Path, info: dict, tmp: Path) -> list[Measurement]:
    """ref beside the native pair on the small corpus, one process: each backend's MB/s from its encode seconds."""
    run = run_compare(f"ref on the small corpus ({text_mb(info):.0f} MB)", small, tmp / "ref",
                      ["--jobs", "1"], backends=("ref", *BACKENDS), diagnose=False)
    seconds = run.summary["timing"]["models"][MODEL]["backends"]
    ref_runs = [r for r in run.summary["runs"] if r["backend"] == "ref"]
    mismatches = sum(r["mismatches"] for r in ref_runs)
    rate = {b: text_mb(info) / seconds[b] for b in ("ref", *BACKENDS) if seconds.get(b)}
    rows = [Measurement("ref (pure Python) on the small corpus: encoding throughput", rate["ref"], "MB/s",
                        detail=f"{seconds['ref']:.1f} s encoding {text_mb(info):.1f} MB; "
                               f"{mismatches} mismatches against {ref_runs[0]['oracle'] if ref_runs else '?'}")]
    for b in BACKENDS:
        if b in rate:
            rows.append(Measurement(f"ref / {b} encoding speed (small corpus, same run)", rate["ref"] / rate[b],
                                    "ratio", detail=f"{rate['ref']:.2f} vs {rate[b]:.2f} MB/s"))
    return rows


def memory_row(runs: list[Run]) -> Measurement:
    """The largest peak RSS of any process that holds cases (a driver, a worker, an actor): the
    corpus is streamed, never held, so it does not grow with the corpus."""
    peaks = [(run.driver_kb, f"{run.label} driver") for run in runs]
    peaks += [(p.hwm_kb, f"{run.label} {r}") for run in runs for r, p in run.others if r in ("worker", "ray worker")]
    kb, who = max(peaks)
    return Measurement("largest peak RSS of a driver or worker in the runs", kb / 1024, "MiB", "<= 512",
                       f"{who}; the corpus is streamed: a few hundred MiB whatever its size")


def agreement_row(runs: list[Run]) -> Measurement:
    first = runs[0].counts()
    differing = [r.label for r in runs[1:] if r.counts() != first]
    return Measurement(f"the {len(runs)} runs give the same counts (summary.json runs and tag rates, mismatches.csv)",
                       0.0 if differing else 1.0, "yes=1", ">= 1",
                       f"differ from {runs[0].label}: {', '.join(differing)}" if differing else
                       f"{', '.join(r.label for r in runs)}: {runs[0].cases:,} cases each")


def driver_row(runs: list[Run], small: Run | None, mb: float) -> Measurement:
    """Cases per CPU second of a run's driver, which receives, counts and journals every worker's
    record in case order: however many workers, a run cannot go faster. The marginal rate, from
    the same configuration on the small corpus, leaves out what does not grow with the corpus
    (start-up, loading the known list, writing the reports)."""
    run = median_run(runs)
    all_in = run.cases / run.driver_cpu
    if small is None or run.cases <= small.cases or run.driver_cpu <= small.driver_cpu:
        rate, how = all_in, "all in (no small run to take the fixed part from)"
    else:
        rate = (run.cases - small.cases) / (run.driver_cpu - small.driver_cpu)
        how = (f"marginal: ({run.driver_cpu:.1f} - {small.driver_cpu:.1f}) s for ({run.cases:,} - {small.cases:,}) "
               f"cases; all in {all_in:,.0f} cases/s")
    return Measurement(f"driver ceiling: cases per CPU second of the {run.label} driver", rate, "cases/s",
                       detail=f"{how}; {rate * mb / max(1, run.cases):.0f} MB/s at this corpus's mean document size")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale-mb", type=int, default=int(os.environ.get("TOKPARITY_BENCH_SCALE_MB", 1024)),
                        help="size of the corpus of text (default 1024, or $TOKPARITY_BENCH_SCALE_MB)")
    parser.add_argument("--small-mb", type=int, default=20, help="the corpus the reference is measured on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale-rounds", type=int, default=1, help="interleaved rounds of the three runs")
    parser.add_argument("--no-ray", action="store_true", help="leave the Ray cluster out")
    args, _ = parser.parse_known_args()  # nox -s bench passes the same arguments to every script
    work = Path(os.environ.get("TOKPARITY_BENCH_WORK", OUT / "work"))

    corpus, info = cached_corpus(work, args.seed, args.scale_mb)
    small, small_info = cached_corpus(work, args.seed, min(args.small_mb, args.scale_mb))
    mb = text_mb(info)
    rows = corpus_rows(info, small_info)
    why_not_ray = "left out (--no-ray)" if args.no_ray else has_ray_flag()
    if why_not_ray:
        print(f"Ray: NOT MEASURED: {why_not_ray}", flush=True)

    configs: dict[str, list[Run]] = {"one process (--jobs 1)": [], "--jobs 2": [], "Ray, 2 local nodes x 1 CPU": []}
    with tempfile.TemporaryDirectory(dir=work) as tmp_name:
        tmp = Path(tmp_name)
        rows += reference_rows(small, small_info, tmp)
        small_runs: dict[str, Run] = {"--jobs 2": run_compare("--jobs 2 on the small corpus", small, tmp / "small-j2",
                                                              ["--jobs", "2"])}
        for r in range(args.scale_rounds):
            order = list(configs) if r % 2 == 0 else list(configs)[::-1]
            for label in order:
                out = tmp / f"{len(configs[label])}-{list(configs).index(label)}"
                if label.startswith("Ray"):
                    if why_not_ray:
                        continue
                    try:
                        with LocalCluster() as cluster:
                            if r == 0:
                                small_runs[label] = cluster.run(f"{label}, small corpus", small, tmp / "small-ray")
                            configs[label].append(cluster.run(label, corpus, out))
                    except RuntimeError as e:
                        why_not_ray = f"the local cluster did not start: {e}"
                        print(f"Ray: NOT MEASURED: {why_not_ray}", flush=True)
                    continue
                jobs = "1" if label.startswith("one") else "2"
                configs[label].append(run_compare(label, corpus, out, ["--jobs", jobs]))

    one, two, ray = configs.values()
    for runs in (one, two, ray):
        if runs:
            rows += run_rows(median_run(runs), mb)
    # Targets (docs/benchmarks.md says why): the wall ratios leave room for a shared 2-core machine;
    # the CPU ratios do not depend on it. A quick run's fixed costs (workers and actors starting,
    # the model loaded by each) weigh on both, so they are judged on a full-size corpus only.
    full = args.scale_mb >= 512
    if not full:
        print(f"--scale-mb {args.scale_mb}: the scaling targets are judged from 512 MB up", flush=True)
    rows.append(ratio_row("compare --jobs 2 speed / one process", two, one, ">= 1.3" if full else ""))
    rows.append(cpu_row("compare --jobs 2 CPU seconds / one process's", two, one, "<= 1.2" if full else ""))
    if ray:
        rows.append(ratio_row("compare --ray (2 local nodes x 1 CPU) speed / one process", ray, one,
                              ">= 1.2" if full else ""))
        rows.append(cpu_row("compare --ray CPU seconds (driver, workers, the cluster's processes) / one process's",
                            ray, one, "<= 1.3" if full else ""))
    else:
        rows.append(Measurement("compare --ray speed / one process: NOT MEASURED", 0.0, "ratio",
                                detail=f"not measured: {why_not_ray}"))
    rows.append(memory_row([run for runs in (one, two, ray) for run in runs]))
    rows.append(agreement_row([r for runs in (one, two, ray) for r in runs[:1]]))
    rows.append(driver_row(two, small_runs.get("--jobs 2"), mb))
    if ray:
        rows.append(driver_row(ray, small_runs.get(list(configs)[2]), mb))
    return 0 if save("scale", rows, f"scale: compare {MODEL} -b {' -b '.join(BACKENDS)} on {mb:,.0f} MB of "
                                    "Parquet, one process, --jobs 2, Ray") else 1


if __name__ == "__main__":
    sys.exit(main())
