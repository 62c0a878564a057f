"""``compare --ray [ADDRESS]``: the cases judged by Ray actors, on this machine or a cluster.

    driver (this process)                          actors (CaseJudge, one model each, 1 CPU)
    ─────────────────────                          ─────────────────────────────────────────
    a ModelLedger per model (tokparity.run.ledger)     ModelRun(model): vocabulary and backends,
    ──create──► CaseJudge(model) ──meta()──────►   loaded once, kept for the whole run
    ◄── which backends started, their versions
    read the corpora, 128 cases a batch  ─judge─►  run.ask(texts), run.judge(case, n, answers)
    apply records in case order, journal ◄records─
    ──close()──► (the model's cases are all sent)  backends closed, engines stopped

The driver is the parent of ``--jobs N`` with another transport: the same ``ModelLedger`` counts
each record (``Tally.apply``) in case order and journals it, the same ``merge_models`` names
the causes (``diagnose_all``, here, in case order) and merges the models in command-line order.
So the reports, the journal (``--resume``) and the exit status are those of ``--jobs 1``.

Backpressure: an actor has at most ``QUEUED_PER_ACTOR`` batches sent and not returned (one it
judges, one waiting, so it never idles on a round trip), so the driver holds at most that many
batches per actor (and their records, until the earlier ones are in): a corpus is read only as
fast as it is judged, never whole. Actors are made lazily, one more only when every actor of the
model has a full queue and the cluster's CPUs (``--ray``: those we started it with) allow one:
a small corpus loads its model once. Models run in command-line order; the next one's first
actor starts loading as soon as the previous model's cases are all sent, and an actor is
stopped (its engines closed) when its model has no more cases for it.

Why actors and not Ray Data's ``map_batches`` with a class: the driver must see each model's
records in case order to count and journal them as one process does, skip the cases a journal
holds, make the too-long records and stop at an unreadable corpus line after the cases before
it. ``map_batches`` is a stateless pipeline over a dataset, streamed in blocks whose order and
sizes Ray Data chooses; those semantics would be rebuilt around it, for nothing: the work is a
loop over batches sent to loaded objects, which is what actors are.
"""

from __future__ import annotations

import os
import secrets
import socket
import tempfile
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from tokparity import __version__
from tokparity.corpus import Case, is_too_long, numbered_cases
from tokparity.errors import RayError, TokparityError
from tokparity.run.ledger import ModelLedger, merge_models
from tokparity.run.messages import Failed, Judged, Reply, Started
from tokparity.run.options import CompareOptions, Services
from tokparity.run.pipeline import ModelRun, too_long_record
from tokparity.run.results import ResultsSoFar

BATCH_CASES = 128  # cases per call to an actor: many, so that a call costs little beside its judging
QUEUED_PER_ACTOR = 2  # batches sent to an actor and not returned: one judged, one waiting
WAIT_SECONDS = 1.0  # ray.wait returns at least this often, so Ctrl-C is handled at once
CONNECT_SECONDS = 5.0  # a cluster address that does not answer a TCP connect in this time is an error
CLOSE_SECONDS = 10.0  # time the actors get to close their backends before they are killed
INSTALL = "pip install 'tokparity[ray]'"


# -- the actor -------------------------------------------------------------------------------------

class CaseJudge:
    """One model's backends, loaded once, judging the batches of cases the driver sends. Made a
    Ray actor by ``ray.remote`` at run time (this module imports without Ray). A failure is
    returned as ``{"error": text}``, never raised: the driver says it in one line."""

    def __init__(self, spec: str, backend_names: list[str] | None, sent: CompareOptions):
        off_the_path()  # (again: what Ray did after the worker's setup hook, before the backends import)
        self.notes: list[str] = []  # progress (a backend skipped): said by the driver
        self.error = ""
        self.run: ModelRun | None = None
        self.results = ResultsSoFar()
        try:
            options = replace(sent, services=Services(progress=self.notes.append))
            self.run = ModelRun(spec, backend_names, options, self.results)
        except TokparityError as e:
            self.error = str(e)
        except Exception as e:  # a bug, not bad input: the driver shows where
            self.error = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"

    def meta(self) -> Reply:
        """What the driver's ledger needs: the chain, the backends that started, their versions."""
        if self.run is None:
            return Reply(Failed(self.error), self._said())
        return Reply(self.run.started(), self._said())

    def judge(self, batch: list[tuple[int, Case]]) -> Reply:
        """The records of ``batch`` ((case position, case) pairs), in its order, judged as one
        process judges them (``ModelRun.judge_many``)."""
        if self.run is None:
            return Reply(Failed(self.error), self._said())
        try:
            records = self.run.judge_many(batch)
        except Exception as e:
            return Reply(Failed(f"{type(e).__name__}: {e}\n{traceback.format_exc()}"), self._said())
        return Reply(Judged(records), self._said())

    def close(self) -> float:
        """Close the backends (a ``cmd:`` engine's process group is killed): seconds it took."""
        if self.run is None:
            return 0.0
        run, self.run = self.run, None
        run.close()
        return float(run.timing.get("close", 0.0))

    def _said(self) -> list[str]:
        said, self.notes[:] = list(self.notes), []
        return said


# -- connecting ------------------------------------------------------------------------------------

def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayError(f"--ray needs Ray: {INSTALL}") from None
    return ray


def is_local(address: str | None) -> bool:
    """``--ray`` without an address (stored as "local"): start a Ray instance on this machine."""
    return address in ("", "local")


def local_environment() -> None:
    """For a Ray we start: no usage report, and a token of its own (before Ray is imported: it
    reads them then). Ray's default would write ~/.ray/auth_token, which a later `ray start
    --head` on this machine picks up and a `ray start --address` joining it does not."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if "RAY_AUTH_MODE" not in os.environ:
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))


DRIVER_FOLDER = "TOKPARITY_DRIVER_FOLDER"  # in the workers' environment: the folder tokparity was started in


def off_the_path() -> None:
    """In a Ray worker: the folder tokparity was started in off ``sys.path``, and the worker's current
    folder. Ray puts the driver's folder on the path for every job (its code search path), so a
    ``tomllib.py`` or ``tokenizers.py`` there would be imported by the actors. tokparity itself
    comes from its installation, as the driver's does. The run's relative paths (``compare .``)
    are read from that folder, as the driver reads them."""
    import sys

    folder = os.environ.get(DRIVER_FOLDER)
    # (a relative entry is some current folder's: none is tokparity's)
    sys.path[:] = [p for p in sys.path if os.path.isabs(p) and os.path.normpath(p) != folder]
    if folder:  # (Ray started workers in an empty folder: the run's relative paths are the driver's folder's)
        try:
            os.chdir(folder)
        except OSError:
            pass  # (another machine of a cluster: the run names no file relative to a folder it lacks)


@contextmanager
def keeping_stop_handlers() -> Iterator[None]:
    """``ray.init`` puts a handler of Ray's on SIGTERM that dumps a trace and aborts: no reports, and
    a local Ray's agents left running. tokparity's own handlers (the reports written, every child
    stopped) are put back once Ray has started."""
    import signal
    import threading

    from tokparity.backends.orphans import STOP_SIGNALS

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in handlers.items():
            if handler is not None:
                signal.signal(signum, handler)


def connect(ray: Any, address: str, jobs: int, empty: str) -> int:
    """``ray.init`` for ``--ray ADDRESS``: a local instance with ``jobs`` CPUs (all of them unless
    more than 1), or the cluster at ``address`` (``auto``: the one running here or in $RAY_ADDRESS).
    The number of actors the run may have at once (the cluster's CPUs). ``empty``: the empty folder
    ``ray.init`` runs from (``in_empty_folder``)."""
    import logging

    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR, "configure_logging": True,
                             "runtime_env": {"worker_process_setup_hook": "tokparity.run.cluster.off_the_path",
                                             "env_vars": {DRIVER_FOLDER: os.path.abspath(os.curdir)}}}
    if is_local(address):
        cpus = jobs if jobs > 1 else os.cpu_count() or 1
        with keeping_stop_handlers(), in_empty_folder(empty):
            ray.init(num_cpus=cpus, include_dashboard=False, **quiet)
        return cpus
    _check_reachable(ray, address)
    try:
        with keeping_stop_handlers(), in_empty_folder(empty):
            ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as e:  # no cluster found, Ray Client missing
        raise RayError(f"--ray {address}: cannot attach to the Ray cluster ({_first_line(e)}); start it with "
                       "'ray start --head', give its address (HOST:PORT, ray://HOST:PORT, auto), and for a cluster "
                       "with token authentication its token (RAY_AUTH_TOKEN)") from None
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


@contextmanager
def in_empty_folder(empty: str) -> Iterator[None]:
    """``ray.init`` run from an empty folder of its own: Ray puts the driver's current folder on every
    worker's path, and its workers import libraries (pydantic, pyarrow) while they start, before any
    hook of tokparity's can take the folder off (an independent hostile campaign's find). Ray starts
    its workers in that folder, later too: it must outlive the session (``ray_session``)."""
    here = os.getcwd()
    os.chdir(empty)
    try:
        yield
    finally:
        os.chdir(here)


def _check_reachable(ray: Any, address: str) -> None:
    """A TCP connect to the address first: ``ray.init`` waits for an unreachable cluster for
    minutes, retrying, where one line now is what the user needs."""
    target = address.removeprefix("ray://")
    if address == "auto":
        target = _auto_address(ray) or ""
        if not target:
            return  # ray.init says there is none, at once
    host, _, port = target.rpartition(":")
    if not host or not (port.isascii() and port.isdigit()):
        raise RayError(f"--ray {address}: not a Ray cluster address; give HOST:PORT, ray://HOST:PORT or auto, or "
                       "--ray alone to start one on this machine")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as e:
        raise RayError(f"--ray {address}: no Ray cluster answers at {host}:{port} ({e.strerror or e}); start it "
                       "with 'ray start --head', or check the address") from None


def _auto_address(ray: Any) -> str | None:
    """The address ``auto`` stands for ($RAY_ADDRESS, else a cluster running on this machine), as
    Ray itself finds it; None where this Ray does not say."""
    try:
        from ray._private.services import canonicalize_bootstrap_address

        return canonicalize_bootstrap_address("auto")
    except Exception:  # (a private function: another Ray may have moved it; ray.init then decides)
        return None


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


# -- the driver ------------------------------------------------------------------------------------

@dataclass
class _Actor:
    handle: Any
    model: int  # the ModelLedger's index
    queued: int = 0  # batches sent, not returned
    closing: bool = False


@dataclass
class _Feed:
    """One model's cases, read from the corpora as they are sent: the enumeration of
    ``JudgedCases.batches`` (positions over all corpora, the journal's cases skipped, too long
    ones recorded here, not sent)."""
    m: ModelLedger
    cases: Iterator[tuple[int, Case]]
    total: int = 0
    exhausted: bool = False
    sent: int = 0  # batches sent, not returned
    actors: list[_Actor] = field(default_factory=list)


@contextmanager
def ray_session(address: str, jobs: int = 1) -> Iterator[tuple[Any, int]]:
    """Ray, attached for ``--ray ADDRESS`` (``connect``), and how many actors it may run at once.
    At the end a local instance we started stops, its reaper with it; from a cluster we only
    disconnect. A local instance's reaper stops it even when tokparity is killed (``reaper``)."""
    from tokparity.run import reaper

    if is_local(address):
        local_environment()
    ray = import_ray()
    watch = reaper.Reaper(reaper.marked()) if is_local(address) else None  # (the mark: before Ray starts)
    try:
        with tempfile.TemporaryDirectory(prefix="tokparity-ray-") as empty:
            slots = connect(ray, address, jobs, empty)
            try:
                yield ray, slots
            finally:
                ray.shutdown()
    finally:
        os.environ.pop(reaper.MARK, None)  # (the children this process starts later are not Ray's)
        if watch is not None:
            watch.close()


def run_models_on_ray(models: list[str], corpora: list[str], backend_names: list[str] | None,
                      options: CompareOptions, results: ResultsSoFar) -> None:
    """Every model's cases judged by Ray actors, counted and merged into ``results`` here."""
    address = options.ray or ""
    with ray_session(address, options.jobs) as (ray, slots):
        results.timing_jobs = slots
        options.say(f"--ray {address or 'local'}: up to {slots} actor(s), {BATCH_CASES} cases a batch")
        _Driver(ray, models, corpora, backend_names, options, results, slots).run()


class _Driver:
    def __init__(self, ray: Any, models: list[str], corpora: list[str], backend_names: list[str] | None,
                 options: CompareOptions, results: ResultsSoFar, slots: int):
        self.ray, self.corpora, self.options, self.results, self.slots = ray, corpora, options, results, slots
        self.backend_names = backend_names
        self.sent = options.for_worker()
        self.state = [ModelLedger(i, spec, 1) for i, spec in enumerate(models)]
        self.remote = ray.remote(num_cpus=1, max_restarts=1, max_task_retries=1)(CaseJudge)
        self.feeds: list[_Feed] = []  # the models started, in order
        self.actors: list[_Actor] = []
        self.in_flight: dict[Any, tuple[str, _Actor]] = {}  # ref -> ("meta" | "judge" | "close", actor)
        self.failure = ""

    def run(self) -> None:
        for m in self.state:
            m.read_done(self.options)
        finished = False
        try:
            while True:
                self._start_next_model()
                self._send()
                if not self.in_flight:
                    break
                ready, _ = self.ray.wait(list(self.in_flight), num_returns=1, timeout=WAIT_SECONDS)
                for ref in ready:
                    self._receive(ref)
            if self.failure:
                raise TokparityError(self.failure)
            finished = True
        finally:
            self._stop_actors(finished)
            merge_models(self.state, self.results, self.corpora)

    # sending ------------------------------------------------------------------------------------

    def _start_next_model(self) -> None:
        """The next model's first actor, once every case of the models before it is sent (its
        loading then overlaps their last batches)."""
        if self.failure or len(self.feeds) == len(self.state):
            return
        if self.feeds and not self.feeds[-1].exhausted:
            return
        if len(self.actors) >= self.slots:  # (the previous model's actors free theirs as they close)
            return
        m = self.state[len(self.feeds)]
        self.feeds.append(_Feed(m, numbered_cases(self.corpora, self.options.max_chars)))
        self._new_actor(self.feeds[-1])

    def _new_actor(self, feed: _Feed) -> _Actor:
        actor = _Actor(self.remote.remote(feed.m.spec, self.backend_names, self.sent), feed.m.index)
        self.actors.append(actor)
        feed.actors.append(actor)
        self.in_flight[actor.handle.meta.remote()] = ("meta", actor)
        return actor

    def _send(self) -> None:
        """Batches of the model being read, to its actors with room in their queue (a new actor
        where the cluster has room for one)."""
        if self.failure or not self.feeds:
            return
        feed = self.feeds[-1]
        while not feed.exhausted and feed.m.tally is not None:  # (reading starts once the ledger is made)
            actor = min((a for a in feed.actors if not a.closing), key=lambda a: a.queued, default=None)
            if actor is None or actor.queued >= QUEUED_PER_ACTOR:
                if len(self.actors) < self.slots:
                    actor = self._new_actor(feed)
                else:
                    break
            batch = self._next_batch(feed)
            if batch:
                self.in_flight[actor.handle.judge.remote(batch)] = ("judge", actor)
                actor.queued += 1
                feed.sent += 1
        if feed.exhausted:
            self._close_idle(feed)
            self._end_if_done(feed)

    def _next_batch(self, feed: _Feed) -> list[tuple[int, Case]]:
        """Up to ``BATCH_CASES`` cases to judge; a too long one becomes its record here, as in one
        process; an unreadable corpus line ends the feed and fails the run once the cases before
        it are counted."""
        m, batch = feed.m, []
        try:
            for n, case in feed.cases:
                feed.total = n + 1
                if n in m.done:  # judged in the run this one resumes
                    continue
                if is_too_long(case, self.options.max_chars):
                    m.waiting[n] = [too_long_record(m.model.name, case, n)]
                    continue
                batch.append((n, case))
                if len(batch) >= BATCH_CASES:
                    return batch
        except TokparityError as e:
            self.failure = self.failure or str(e)
        feed.exhausted = True
        return batch

    # receiving ----------------------------------------------------------------------------------

    def _receive(self, ref: Any) -> None:
        kind, actor = self.in_flight.pop(ref)
        feed = next(f for f in self.feeds if f.m.index == actor.model)
        m = feed.m
        try:
            answer = self.ray.get(ref)
        except self.ray.exceptions.RayError as e:
            self._lost(actor, feed, kind, e)
            return
        if kind == "close":
            if m.tally is not None:
                m.tally.timing["close"] = m.tally.timing.get("close", 0.0) + answer
            self._forget(actor)
            return
        for note in answer.said:
            self.options.say(note)
        message = answer.message
        if isinstance(message, Failed):
            self.failure = self.failure or message.error
        elif isinstance(message, Started):
            if message.tokparity != __version__:
                self.failure = self.failure or (
                    f"--ray: the cluster runs tokparity {message.tokparity}, this is {__version__}; install "
                    "the same version on every node")
            else:
                m.start(message, self.options)
        else:
            m.take(message.records, self.options)
        if kind == "judge":
            actor.queued -= 1
            feed.sent -= 1
        if feed.exhausted:
            self._close_idle(feed)
            self._end_if_done(feed)

    def _lost(self, actor: _Actor, feed: _Feed, kind: str, error: BaseException) -> None:
        """An actor that died (its node lost, its memory exhausted) after Ray's one restart."""
        if kind == "judge":
            actor.queued -= 1
            feed.sent -= 1
        if kind == "close":  # its backends' engines were being stopped anyway
            self._forget(actor)
            return
        self.failure = self.failure or (
            f"compare --ray: a Ray actor judging {feed.m.model.name} failed ({_first_line(error)}); the cases judged "
            "so far are in the journal: resume, or rerun with --jobs 1 to see the failure (is tokparity "
            f"{__version__} installed on every node?)")

    def _end_if_done(self, feed: _Feed) -> None:
        m = feed.m
        if feed.exhausted and not feed.sent and not m.finished and not self.failure and m.tally is not None:
            m.shards_done, m.total = 1, feed.total
            m.end(self.options, "--ray")

    # stopping -----------------------------------------------------------------------------------

    def _close_idle(self, feed: _Feed) -> None:
        """A model's actors with nothing queued, once its cases are all sent: their backends closed
        (a slot freed for the next model)."""
        for actor in feed.actors:
            if not actor.queued and not actor.closing and not self._awaits_meta(actor):
                actor.closing = True
                self.in_flight[actor.handle.close.remote()] = ("close", actor)

    def _awaits_meta(self, actor: _Actor) -> bool:
        return any(kind == "meta" and a is actor for kind, a in self.in_flight.values())

    def _forget(self, actor: _Actor) -> None:
        self.ray.kill(actor.handle, no_restart=True)
        if actor in self.actors:
            self.actors.remove(actor)

    def _stop_actors(self, finished: bool) -> None:
        """Every actor closes its backends (the engines of ``cmd:`` backends stopped), then is
        killed. After Ctrl-C or an error the batches still queued are cancelled first."""
        if not finished:
            for ref, (kind, _) in list(self.in_flight.items()):
                if kind == "judge":
                    self.ray.cancel(ref)
        closing = [a.handle.close.remote() for a in self.actors if not a.closing]
        closing += [ref for ref, (kind, _) in self.in_flight.items() if kind == "close"]
        if closing:
            self.ray.wait(closing, num_returns=len(closing), timeout=CLOSE_SECONDS)
        for actor in list(self.actors):
            self.ray.kill(actor.handle, no_restart=True)
        self.actors.clear()
        self.in_flight.clear()
