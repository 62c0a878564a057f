"""``compare --jobs N``: the models (or shards of one model's cases) judged in N worker processes.

    parent                                   workers (spawned, one per job)
    ──────                                   ───────
    tasks: model 1, model 2, …   ──task──►   ModelRun(model): load vocabulary, start backends
    a ledger per model            ◄─meta──   which backends started, their versions
    apply records in case order   ◄─records─ judge each case of the task (encode, diff, classify)
    write the journal             ◄─done───  next task, or stop

A run's cost is half loading (a 250k-token vocabulary through transformers' converter takes
seconds) and half judging, so whole models go to workers, each loaded once; only when there are
fewer models than jobs is a model split into shards of cases (case ``n`` goes to shard
``n % shards``), each shard loading its own backends.

What makes the result the same as ``--jobs 1``: every record is judged by the same code
(``ModelRun.judge``) and counted by the same code (``Tally.apply``) in the parent, in case
order within each model; each model counts into a ``ResultsSoFar`` of its own, merged into the run's
in model order at the end, so the mismatch list, the summaries and even the order of keys in
summary.json come out as one process would write them. The journal is the parent's alone, so
``--resume`` works as before. Workers ignore Ctrl-C; the parent stops them (SIGTERM: each stops
its engines and exits) and keeps what it counted. A worker whose parent dies, even by SIGKILL,
is sent SIGTERM too (Linux's ``PR_SET_PDEATHSIG``), and a worker that finds its parent gone
exits quietly.

There are never more workers than tasks, nor more shards of a model than it has cases, nor more
than ``MAX_JOBS_PER_CPU`` workers per CPU (``-j 100000`` is taken as that, with a note).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import cast

from tokparity.backends.isolated import child_env
from tokparity.child_python import die_with_parent, python_argv
from tokparity.corpus import load_corpus
from tokparity.errors import TokparityError
from tokparity.records import CaseRecord
from tokparity.run.journal.resume import DoneSet
from tokparity.run.ledger import ModelLedger, merge_models
from tokparity.run.memory import collector_relaxed
from tokparity.run.messages import Failed, Finished, Judged, Named, Said, Started
from tokparity.run.options import CompareOptions, Services
from tokparity.run.pipeline import ModelPipeline
from tokparity.run.results import ResultsSoFar
from tokparity.whole_files import write_text_whole

MAX_JOBS_PER_CPU = 4  # more workers than this only wait for a CPU, each holding its model in memory
BATCH_SECONDS = 0.2  # a worker sends its records at least this often (and every BATCH_RECORDS)
BATCH_RECORDS = 200
# A worker found stopped (SIGSTOP, a debugger) this many times in a row, this far apart, ends the run:
# it would otherwise be waited for for ever.
WATCH_SECONDS, STOPPED_WATCHES = 2.0, 3


@dataclass
class Task:
    index: int  # the model's position on the command line
    spec: str
    shard: int = 0
    shards: int = 1
    done: DoneSet = field(default_factory=DoneSet)  # cases the journal already holds

    def skips(self, n: int) -> bool:
        """Case ``n`` is another shard's, or done in an earlier run."""
        return n % self.shards != self.shard or n in self.done


# -- the worker ------------------------------------------------------------------------------------

def _worker(conn: Connection) -> None:
    """Judge the cases of each task the parent sends, until it sends None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle

    corpora, backend_names, sent = conn.recv()
    options = replace(sent, services=Services(progress=lambda message: conn.send((-1, Said(message)))))
    with collector_relaxed():
        while True:
            task: Task | None = conn.recv()
            if task is None:
                return
            _judge_task(conn, task, corpora, backend_names, options)


def _judge_task(conn: Connection, task: Task, corpora: list[str], backend_names: list[str] | None,
                options: CompareOptions) -> None:
    """One model's cases (or a shard of them), sent back as they are judged."""
    try:
        local = ResultsSoFar()
        pipeline = ModelPipeline.open(task.spec, backend_names, options, local)
    except TokparityError as e:
        conn.send((task.index, Failed(str(e))))
        return
    except Exception as e:  # a bug, not bad input: the parent shows where
        conn.send((task.index, Failed(f"{type(e).__name__}: {e}\n{traceback.format_exc()}")))
        return
    closed = False
    batch: list[CaseRecord] = []
    run = pipeline.run
    _ACTIVE[:] = [pipeline]
    try:
        conn.send((task.index, run.started()))
        sent = started = time.monotonic()
        cases = pipeline.cases(corpora, skip=task.skips)
        # A worker that judges a whole model in case order (one shard, nothing resumed) names its
        # causes too, as one process would: the parent then need not load the model again.
        whole = task.shards == 1 and not len(task.done) and options.diagnose
        for judged in cases.batches():  # (whole cases: a case's records, one per op, are sent together)
            batch += judged
            if whole:
                pipeline.count(judged)
            if len(batch) >= BATCH_RECORDS or time.monotonic() - sent > BATCH_SECONDS:
                conn.send((task.index, Judged(batch)))
                batch, sent = [], time.monotonic()
        conn.send((task.index, Judged(batch)))
        if whole:
            pipeline.diagnose(corpora)
            conn.send((task.index, Named(pipeline.named())))
        pipeline.close()
        closed = True
        conn.send((task.index, Finished(cases.total, time.monotonic() - started + run.timing["load"],
                                        run.timing["close"])))
    except TokparityError as e:  # a corpus that cannot be read, named by file and line
        conn.send((task.index, Judged(batch)))  # the cases before the bad line count
        conn.send((task.index, Failed(str(e))))
    except Exception as e:
        conn.send((task.index, Failed(f"{type(e).__name__}: {e}\n{traceback.format_exc()}")))
    finally:
        if not closed:
            pipeline.close()
        _ACTIVE.clear()


_ACTIVE: list = []  # the ModelPipeline a worker is running, for _stop_worker


def _stop_worker(signum: int, frame: object) -> None:
    """SIGTERM, from the parent stopping the run or from its death: close the task's backends here
    (killing their engines) and exit at once. Not by raising SystemExit to unwind: an exception from
    a signal handler can land inside a finalizer (a backend's, reaping its engine), which swallows it
    and prints "Exception ignored … SystemExit" on stderr, and the worker goes on. A second SIGTERM
    (the parent's death after its own) is ignored: run again inside this one, it would exit before
    the engines are killed."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for run in list(_ACTIVE):
        try:
            run.close()
        except BaseException:  # (exiting anyway: nothing to say it to)
            pass
    os._exit(0)


# -- the parent ------------------------------------------------------------------------------------

def run_models_in_workers(models: list[str], corpora: list[str], backend_names: list[str] | None,
                          options: CompareOptions, results: ResultsSoFar) -> None:
    jobs = _capped_jobs(options)
    shards = max(1, -(-jobs // len(models))) if models else 1  # ceil: keep every job busy
    if shards > 1:  # no more shards than cases (each shard loads the model again)
        shards = min(shards, _cases_up_to(corpora, shards))
    state = [ModelLedger(i, spec, shards) for i, spec in enumerate(models)]
    # Longest first, so that no worker is left alone with a big model at the end.
    history = _read_history()
    order = sorted(state, key=lambda m: -_estimated_seconds(m.model, history))
    tasks = [Task(m.index, m.spec, shard, shards) for m in order for shard in range(shards)]
    sent = options.for_worker()
    workers: dict[Connection, subprocess.Popen] = {}
    options.say(f"--jobs {options.jobs}: {len(tasks)} task(s) over {min(jobs, len(tasks))} worker processes")

    for m in state:
        m.read_done(options)

    pending = list(tasks)
    for task in tasks:
        task.done = state[task.index].done
    finished_normally = False
    stopped: set[Connection] = set()  # told to stop: no task is left for them
    try:
        for _ in range(min(jobs, len(tasks))):
            conn, process = _start_worker()
            workers[conn] = process
            conn.send((corpora, backend_names, sent))
        idle = list(workers)
        frozen: dict[Connection, int] = {}  # workers found stopped, and how many watches in a row
        failure = ""  # the first error a worker reported: no new task; the busy ones finish theirs
        while any(not m.finished for m in state) and not (failure and len(idle) == len(workers)):
            while idle and pending and not failure:
                idle.pop().send(pending.pop(0))
            if not pending and not failure:
                for conn in idle:  # it can end (and free its memory) while the others finish
                    if conn not in stopped:
                        conn.send(None)
                        stopped.add(conn)
            ready_now = wait([c for c in workers if c not in stopped], timeout=WATCH_SECONDS)
            if not ready_now:
                frozen = {c: frozen.get(c, 0) + 1 for c in workers if c not in stopped and _is_stopped(workers[c])}
                late = next((c for c, watches in frozen.items() if watches >= STOPPED_WATCHES), None)
                if late is not None:
                    raise TokparityError(f"compare --jobs: worker process {workers[late].pid} is stopped (SIGSTOP, or "
                                         f"a debugger) and judges nothing; {_in_journal(options)}")
                continue
            for ready in ready_now:
                conn = cast(Connection, ready)
                frozen.pop(conn, None)
                try:
                    index, message = conn.recv()
                except (EOFError, OSError):
                    code = workers[conn].wait()
                    raise TokparityError(f"compare --jobs: a worker process died (exit status {code}); "
                                         f"{_in_journal(options)}, or rerun with --jobs 1 to see the failure") from None
                if isinstance(message, Said):
                    options.say(message.message)
                    continue
                m = state[index]
                if isinstance(message, Failed):  # raised once the other workers have delivered what they judged
                    failure = failure or message.error
                    idle.append(conn)
                elif isinstance(message, Started):
                    m.start(message, options)
                elif isinstance(message, Judged):
                    m.take(message.records, options)
                elif isinstance(message, Named):
                    m.causes = message.diagnosed
                elif isinstance(message, Finished):
                    m.shards_done += 1
                    m.total = max(m.total, message.cases)
                    timing = m.ledger.timing
                    timing["wall"] = timing.get("wall", 0.0) + message.seconds
                    timing["close"] = timing.get("close", 0.0) + message.close_seconds
                    idle.append(conn)
                    if m.finished:
                        m.end(options, "--jobs")
        if failure:
            raise TokparityError(failure)
        finished_normally = True
        _write_history(history, results_of=state)
    finally:
        _stop_workers(workers, stopped, finished_normally)
        merge_models(state, results, corpora)


def _is_stopped(process: subprocess.Popen) -> bool:
    """Whether the process is stopped (state T in /proc: SIGSTOP, a debugger); False where /proc is not."""
    try:
        with open(f"/proc/{process.pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


def _in_journal(options: CompareOptions) -> str:
    """What the journal holds of the run so far, said as it is (a case judged by a worker reaches it
    once every case before it in its model has)."""
    journal = options.services.journal
    if journal is None:
        return "no journal was kept"
    if not journal.written:
        return f"none of the cases judged had reached the journal yet ({journal.path}): run it again"
    return f"{journal.written} case records are in the journal ({journal.path}): resume to judge the rest"


def _stop_workers(workers: dict[Connection, subprocess.Popen], stopped: set[Connection], finished: bool) -> None:
    """Every worker told first, then waited for, so they end side by side: after a finished run
    to stop (idle ones), after an error or Ctrl-C by SIGTERM, which makes each kill its engines
    before it exits (a SIGKILL would leave them running); SIGKILL only for one that does not."""
    for conn, process in workers.items():
        if finished and conn not in stopped:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        elif not finished and process.poll() is None:
            process.send_signal(signal.SIGCONT)  # (a stopped worker takes its SIGTERM only once it runs)
            process.terminate()
    for conn, process in workers.items():
        try:
            process.wait(timeout=10 if finished else 5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        conn.close()


def _capped_jobs(options: CompareOptions) -> int:
    """``--jobs``, at most ``MAX_JOBS_PER_CPU`` per CPU (said when it is cut)."""
    limit = (os.cpu_count() or 1) * MAX_JOBS_PER_CPU
    if options.jobs <= limit:
        return max(1, options.jobs)
    options.say(f"--jobs {options.jobs}: capped at {limit} worker processes ({MAX_JOBS_PER_CPU} per CPU)")
    return limit


def _cases_up_to(corpora: list[str], limit: int) -> int:
    """How many cases the corpora hold, counted up to ``limit`` (at least 1). A corpus that cannot
    be read stops the count: the workers will name it, after the cases before it."""
    n = 0
    try:
        for corpus in corpora:
            for _case in load_corpus(corpus):
                n += 1
                if n >= limit:
                    return n
    except TokparityError:
        pass
    return max(n, 1)


# -- which model first: how long each took last time -------------------------------------------------

def _history_path():
    from tokparity.zoo.fetch import cache_dir
    return cache_dir() / "compare-seconds.json"


def _read_history() -> dict[str, float]:
    """Seconds each model took in earlier runs (it only decides the order of the tasks)."""
    try:
        found = json.loads(_history_path().read_text("utf-8"))
        return {k: float(v) for k, v in found.items()} if isinstance(found, dict) else {}
    except (OSError, ValueError, TypeError):
        return {}


def _estimated_seconds(model, history: dict[str, float]) -> float:
    if model.name in history:
        return history[model.name]
    size = 0
    for path in model.files.values():
        try:
            size += Path(path).stat().st_size
        except OSError:
            pass
    return 1.0 + size / 2e6  # a first guess: bigger files, bigger vocabularies, slower loads


def _write_history(history: dict[str, float], results_of: list[ModelLedger]) -> None:
    for m in results_of:
        if m.tally is not None and m.finished and "wall" in m.tally.timing:
            history[m.model.name] = round(m.tally.timing["wall"], 2)
    try:
        path = _history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_whole(path, json.dumps(history, indent=0, sort_keys=True))
    except OSError:
        pass  # a read-only cache: the next run guesses the order again


def _start_worker() -> tuple[Connection, subprocess.Popen]:
    """A worker as a fresh ``python -m tokparity.run.parallel`` (not multiprocessing's spawn, which
    would import the caller's ``__main__`` again), talking over a socket pair."""
    ours, theirs = socket.socketpair()
    process = subprocess.Popen(python_argv("-m", "tokparity.run.parallel", str(theirs.fileno()), str(os.getpid())),
                               pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=child_env())
    theirs.close()
    return Connection(ours.detach()), process


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_worker)
    try:
        die_with_parent(int(sys.argv[2]))
        _worker(Connection(int(sys.argv[1])))
    except (SystemExit, EOFError, OSError):
        # Stopped by the parent, or the parent is gone (its end of the connection closed): the
        # task's engines are closed, or killed by their finalizers as the interpreter exits.
        # Nothing to say: the parent reports, or is not there to.
        sys.exit(0)
    # Every task's backends are closed and every record sent: skip the interpreter's teardown,
    # which would free each object one by one (a second or more after a 250k-token model).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
