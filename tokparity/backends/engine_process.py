"""One program tokparity starts and speaks JSON lines with: a ``cmd:`` engine, an isolated
library's child, the chat template's sandbox.

The program is started once and kept alive. Every case gets a timeout (10 s by default). The
first request after a start also gets time to load a model: ``startup_timeout`` if given, else
``STARTUP_PER_TIMEOUT`` times the case's timeout, at most ``DEFAULT_STARTUP_TIMEOUT``; once a
start has been seen to answer, a restart gets twice what that took (and a second), not the whole
allowance again. A program whose hello lists ops in ``"loads_on_first_use"`` loads what those ops
need when first asked (transformers' tokenizer for ``chat``): the first request of each after a
start gets the same grace, measured per op, so a busy machine does not turn that load into a
timeout. Such an op that hung with its whole grace gets none again. If the program exits or is killed by a signal the case is a ``crash`` (its exit
status and last stderr lines are the detail), seen when it exits even if a child of its still
holds its stdout; if it does not answer in time the case is a ``timeout`` (saying so when it never
read its input). A program that wrote lines that are not JSON replies before it died or hung broke
the protocol: the case is a ``crash`` quoting the first line (cut, control characters escaped).
Whenever a program ends or is stopped, its whole process group is killed, so nothing it forked
outlives it. The next case starts it again, and the run goes on. A program that dies or hangs
three times in a row before answering anything is not restarted again (the message says which);
one that never answered anything at all did not start, and the run stops (``EngineDidNotStart``).
Strings in replies that JSON can spell but UTF-8 cannot (a lone surrogate, ``"\\udc80"``) are
kept as that escape, in text.

No thread per case: one ``poll`` on the program's stdout and stderr per wake-up (stderr is
drained as it comes, so a chatty program cannot fill its pipe and stall), with the case's
deadline as its timeout. ``encode`` costs three system calls once the program runs (write the
request, ``poll`` until the reply, read it), but also two process wake-ups, which is most of its
cost: tens of microseconds on a quiet machine, hundreds on a busy one with two cores.
``encode_many`` (what ``run_cases`` and ``compare`` use) pipelines: up to 64 requests wait in the
pipe while the program answers, and tokparity naps while replies pile up instead of being woken
by each one (``NAP_MAX``), so neither process sleeps and wakes once per case. A crash or a hang
is still pinned on the case at the head of the queue, because the program answers in order, and
the requests behind it are sent again after the restart. benchmarks/bench_backends.py measures
both paths.
"""

from __future__ import annotations

import math
import os
import select
import subprocess
import time
import weakref

from tokparity.backends import orphans
from tokparity.backends.process import (
    ENGINE_MARK,
    describe_exit,
    exited,
    kill_engine,
    kill_group,
    max_crashes,
    pidfd,
    read_reply,
    scrubbed,
    shown_line,
    wait_for_exit,
)
from tokparity.backends.requests import op_of
from tokparity.errors import BackendCrash, BackendTimeout, CaseFailure, EngineDidNotStart, StartFailed, TokparityError
from tokparity.textview import shown_path

DEFAULT_TIMEOUT = 10.0
DEFAULT_STARTUP_TIMEOUT = 60.0
# Without a startup_timeout of its own, a program's first case after a start gets this many times
# the per-case timeout (at most DEFAULT_STARTUP_TIMEOUT) more, to load its model: --timeout 1 on
# an engine that never answers costs seconds per start, not a minute.
STARTUP_PER_TIMEOUT = 6.0
# poll() takes milliseconds as a C int: a longer wait is slept in pieces (--timeout 1e7 is legal).
_POLL_SECONDS_MAX = 3600.0
MAX_FAILED_STARTS = 3
# A program that has crashed on this many cases is not started again: each restart costs a
# process start and a model load (a second or so), and an engine that aborts on every character
# its pieces do not cover (llama.cpp on an SPM vocabulary without byte pieces) would otherwise
# turn a one-minute run into an hour. The remaining cases are recorded as crashes, saying so.
# TOKPARITY_MAX_CRASHES overrides it (0: never give up); None here: read it then.
MAX_CRASHES: int | None = None
_STDERR_KEPT = 8192  # bytes of the program's stderr kept for crash reports
_PENDING_MAX = 1 << 16  # bytes of requests queued ahead of the program (pipelining)
# Pipelined, from a program that answers a case in under a quarter of NAP_MAX, tokparity does not
# wait reply by reply: it naps while a quarter of the waiting requests are answered (at least
# NAP_MIN, at most NAP_MAX), then reads the replies with one wake-up (see _nap). Waking a sleeping
# process costs tens of microseconds on a virtual machine, and the program pays too (its write has
# to wake us): per reply, that was the protocol's main cost. NAP_MAX = 0 turns napping off.
NAP_MIN, NAP_MAX = 0.0002, 0.001
_READ = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR


class _Died(Exception):
    """The program's stdout closed: it exited or was killed."""


class _Hung(Exception):
    """The program did not answer before the deadline."""


# One request at a time, how long tokparity looks for the reply before it sleeps until it comes.
_SPIN_SECONDS = 0.0003


class EngineProcess:
    """One long-lived child process speaking JSON lines, restarted after a crash or a timeout.

    Requests are given as their JSON members without the id (``'"op": "encode", "text": "Hi"'``);
    the id is added here. ``request_many`` pipelines: up to ``window`` requests are in the pipe
    at once, and each case's timeout runs from the previous reply (the program answers in order).
    """

    def __init__(self, argv: list[str], label: str, *, env: dict | None = None, cwd: str | None = None,
                 startup_timeout: float | None = None, hello: bool = False):
        self.argv, self.label, self.env, self.cwd = argv, label, env, cwd
        self.startup_timeout = startup_timeout  # None: STARTUP_PER_TIMEOUT times the case's timeout
        self.hello = hello  # the program writes {"id": 0, "ready": true, ...} once it has loaded
        self.proc: subprocess.Popen | None = None
        self.starts = self.crashes = self.timeouts = 0
        self.failed_kinds: list[str] = []  # how each start since the last answer ended: "died" or "hung"
        self.last_hello: dict = {}
        self._next_id = 0
        self._answered = False  # since the last start
        self._started_at = 0.0
        self._load_seconds: float | None = None  # from a start to its first answer, the longest seen
        self._ops_answered: set[str] = set()  # ops answered since the last start
        self._op_load_seconds: dict[str, float] = {}  # op -> its first request's seconds after a start, the longest seen
        self._ops_hung: set[str] = set()  # ops whose first request hung with the whole grace, never answered
        self._loads_on_first_use: frozenset[str] = frozenset()  # ops the hello says load when first asked
        self._written = 0  # bytes of requests written since the start
        self._pid_fd: int | None = None
        self._leader_gone = False  # the program exited (a child of its may still hold its stdout)
        self._buf = bytearray()
        self._stderr = bytearray()
        self._junk: list[str] = []
        self._protocol_lines: list[str] = []  # lines that are not replies, since the last reply
        self.last_failure = ""  # what the last case that failed was told (EngineDidNotStart repeats it)
        self._per_reply = 0.0  # seconds per reply in the last pipelined stream (for napping)
        self._finalizer: weakref.finalize | None = None
        self._mark = ""  # in the program's environment: finds what it started outside its group

    # -- process life ----------------------------------------------------------------------------

    def start(self) -> dict:
        """Start the program (and read its hello, if it sends one); ``StartFailed`` says why not."""
        self._stop()
        self._mark = f"{os.getpid()}-{id(self)}-{self.starts}"
        env = {**(self.env if self.env is not None else os.environ), ENGINE_MARK: self._mark}
        try:
            proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    bufsize=0, start_new_session=True, env=env, cwd=self.cwd)
        except OSError as e:
            gone = self.cwd is not None and not os.path.isdir(self.cwd)  # (a resumed run's: where it began)
            why = f"the folder it starts in, {shown_path(self.cwd or '.')}, is gone" if gone else \
                f"cannot start {self.argv[0]!r} ({e.strerror or e}); check the command"
            raise TokparityError(f"{self.label}: {why}") from None
        orphans.started(proc)
        self.proc = proc
        self.starts += 1
        self._answered = False
        self._ops_answered = set()
        self._started_at = time.monotonic()
        self._written = 0
        self._leader_gone = False
        self._buf.clear()
        self._junk.clear()
        self._protocol_lines = []
        self._stderr.clear()  # a crash report quotes this process, not the one before
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None  # all PIPE
        self._in_fd, self._out_fd, self._err_fd = proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()
        os.set_blocking(self._in_fd, False)
        self._poll = select.poll()
        self._poll.register(self._out_fd, _READ)
        self._poll.register(self._err_fd, _READ)
        self._pid_fd = pidfd(proc.pid)
        if self._pid_fd is not None:
            self._poll.register(self._pid_fd, select.POLLIN)
        self._writing = False
        self._stdin_open = True
        # (a forgotten engine, at exit or when collected: its group only; the slower search for
        # processes that left it is the explicit stop's, where a stop signal may interrupt it)
        self._finalizer = weakref.finalize(self, kill_group, proc)
        self.last_hello = {}
        if self.hello:
            waited = DEFAULT_STARTUP_TIMEOUT if self.startup_timeout is None else self.startup_timeout
            deadline = time.monotonic() + waited
            try:
                while (hello := self._next_reply(0)) is None:
                    self._wait(deadline, False)
            except _Died:
                self.failed_kinds.append("died")
                raise StartFailed(self._death_detail("while starting")) from None
            except _Hung:
                self.failed_kinds.append("hung")
                self._stop()
                raise StartFailed(f"did not start within {waited:g} s") from None
            if hello.get("error") is not None:
                self._stop()
                raise StartFailed(str(hello["error"]))
            self._answering()
            self.last_hello = hello
            lazy = hello.get("loads_on_first_use")
            self._loads_on_first_use = frozenset(op for op in lazy if isinstance(op, str)) \
                if isinstance(lazy, list) else frozenset()
        return self.last_hello

    @property
    def failed_starts(self) -> int:
        """Consecutive starts that never answered."""
        return len(self.failed_kinds)

    def _answering(self) -> None:
        """The program answered (its hello or a reply) since it was started."""
        if not self._answered:
            self._answered = True
            loaded = time.monotonic() - self._started_at
            self._load_seconds = max(loaded, self._load_seconds or 0.0)
        self.failed_kinds.clear()

    def grace(self, timeout: float, op: str = "") -> float:
        """Seconds added to the first case after a start, for the program to load its model: the
        ``startup_timeout`` (by default ``STARTUP_PER_TIMEOUT`` times the case's timeout, at most
        ``DEFAULT_STARTUP_TIMEOUT``), or, once a start has been seen to answer, twice what that took
        and a second (a restart loads the same model; an engine that hangs on some cases must not
        cost a minute each). The first request of an op the hello says loads on first use gets the
        same, measured per op; one that hung with the whole allowance and never answered gets none."""
        limit = min(DEFAULT_STARTUP_TIMEOUT, STARTUP_PER_TIMEOUT * timeout) if self.startup_timeout is None \
            else self.startup_timeout
        if not self._answered:
            seen = self._load_seconds
        elif op in self._ops_answered or op in self._ops_hung or op not in self._loads_on_first_use:
            return 0.0
        else:
            seen = self._op_load_seconds.get(op)
        return limit if seen is None else min(limit, 2 * seen + 1.0)

    def _op_answered(self, op: str, seconds: float) -> None:
        """The first reply to ``op`` since the start came ``seconds`` after it was due to begin."""
        if op not in self._ops_answered:
            self._ops_answered.add(op)
            self._op_load_seconds[op] = max(seconds, self._op_load_seconds.get(op, 0.0))
            self._ops_hung.discard(op)

    def _restart(self) -> CaseFailure | None:
        """Start the program again for the next case, or the failure that case gets instead."""
        if self.failed_starts >= MAX_FAILED_STARTS and self._load_seconds is None:
            # (it never answered anything: a wrong command, a missing file, not one crash per case)
            raise EngineDidNotStart(f"{self.label} did not start: {self._failed_starts_said()}; the last time: "
                                    f"{self.last_failure[:400]}")
        if self.failed_starts >= MAX_FAILED_STARTS:
            return BackendCrash(f"{self.label}: not restarted: {self._failed_starts_said()}; "
                                f"last stderr: {self.stderr_tail() or '(empty)'}")
        limit = max_crashes() if MAX_CRASHES is None else MAX_CRASHES
        if limit and self.crashes >= limit:
            return BackendCrash(f"{self.label}: not run: it crashed on {self.crashes} cases already and is not "
                                f"restarted again (TOKPARITY_MAX_CRASHES={limit}); last stderr: "
                                f"{self.stderr_tail() or '(empty)'}")
        try:
            self.start()
        except StartFailed as e:
            self.crashes += 1
            return BackendCrash(f"{self.label}: {e}")
        return None

    def _failed_starts_said(self) -> str:
        """``"it died 3 times in a row before answering anything"``, or hung, or both, as it was."""
        kinds = self.failed_kinds
        n = len(kinds)
        if all(k == "died" for k in kinds):
            return f"it died {n} times in a row before answering anything"
        hint = self._hang_hint()
        if all(k == "hung" for k in kinds):
            return f"it hung {n} times in a row without answering anything{hint}"
        return (f"it failed {n} times in a row without answering anything ({kinds.count('died')} times it died, "
                f"{kinds.count('hung')} times it hung){hint}")

    def _hang_hint(self) -> str:
        if self.startup_timeout is not None:
            return ""
        return (f" (a start may take {STARTUP_PER_TIMEOUT:g} times the per-case timeout, at most "
                f"{DEFAULT_STARTUP_TIMEOUT:g} s: if it loads its model slowly, raise --timeout)")

    def _stop(self) -> None:
        """Kill the program's whole process group (see ``kill_group``) and close its pipes."""
        if self.proc is not None:
            if self._finalizer is not None:
                self._finalizer.detach()
            kill_engine(self.proc, self._mark)
            for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    if f is not None:
                        f.close()
                except OSError:
                    pass
            if self._pid_fd is not None:
                os.close(self._pid_fd)
                self._pid_fd = None
            self.proc = None

    def close(self) -> None:
        """Close the program's stdin (its cue to exit), give it a moment, then kill its group."""
        if self.proc is None:
            return
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        wait_for_exit(self.proc, 1.0)
        self._stop()

    # -- requests --------------------------------------------------------------------------------

    def request(self, body: str, timeout: float) -> tuple[dict, list[str]]:
        """One request: its reply and any stray lines before it. Raises ``BackendCrash`` or
        ``BackendTimeout``; the next request restarts the program.

        To a running program that has answered before, a request of up to ``PIPE_BUF`` bytes
        (which a pipe takes whole or not at all) costs one write, a few ``poll(0)`` while the
        program works (up to ``_SPIN_SECONDS``, then a ``poll`` that sleeps until the reply) and
        one read. Not sleeping at once matters on a VM: waking a sleeping process there costs
        more than a quick engine's whole answer (one request at a time: 91 -> 45 µs per case over
        the engine's own time). Anything else (no program, a full pipe, a program gone since the
        last case, a long text) goes through ``request_many``."""
        if self.proc is not None and self._answered and self._stdin_open and op_of(body) in self._ops_answered:
            line = b'{"id": %d, %s}\n' % (self._next_id + 1, body.encode("ascii"))
            if len(line) <= select.PIPE_BUF:
                try:
                    written = os.write(self._in_fd, line) == len(line)
                except OSError:  # full (not reading), or gone (request_many tells a crash from an exit)
                    written = False
                if written:
                    self._next_id += 1
                    self._written += len(line)
                    deadline = time.monotonic() + timeout
                    spin_until = time.perf_counter() + _SPIN_SECONDS
                    try:
                        while (reply := self._next_reply(self._next_id)) is None:
                            # A quick engine answers within microseconds: look for the reply
                            # without going to sleep first (waking up again costs tens of µs).
                            while not self._poll.poll(0) and time.perf_counter() < spin_until:
                                pass
                            self._wait(deadline, False)
                    except (_Died, _Hung) as e:
                        raise self._failure(e, timeout, 0.0) from None
                    return reply, self.take_junk()
        ((result, junk, _seconds),) = self.request_many([body], timeout)
        if isinstance(result, CaseFailure):
            raise result
        return result, junk

    def request_many(self, bodies: list[str], timeout: float,
                     window: int = 64) -> list[tuple[dict | CaseFailure, list[str], float]]:
        """Every request's reply (or its ``BackendCrash`` / ``BackendTimeout``), the stray lines
        that came before it, and the seconds since the previous reply."""
        out: list = [None] * len(bodies)
        head = 0  # the first request without an answer
        clock = time.monotonic
        if self.proc is not None and exited(self.proc):
            # It exited between requests: start afresh, blaming no case for it (but a program
            # that exits without ever answering counts towards giving up on it).
            if not self._answered:
                self.failed_kinds.append("died")
            self._stop()
        while head < len(bodies):
            if self.proc is None:
                failure = self._restart()
                if failure is not None:
                    out[head] = (failure, [], 0.0)
                    head += 1
                    continue
            grace = self.grace(timeout, op_of(bodies[head]))
            last = started = clock()
            deadline = last + timeout + grace
            base, first_id = head, self._next_id + 1  # request ids follow the cases from here on
            sent, pending = head, bytearray()
            try:
                while head < len(bodies):
                    while sent < len(bodies) and sent - head < window and len(pending) < _PENDING_MAX:
                        self._next_id += 1
                        pending += b'{"id": %d, %s}\n' % (self._next_id, bodies[sent].encode("ascii"))
                        sent += 1
                    if pending and self._stdin_open:
                        self._write_some(pending)
                    reply = self._next_reply(first_id + head - base)
                    if reply is None:
                        self._nap(sent - head, deadline)
                        self._wait(deadline, bool(pending) and self._stdin_open)
                        continue
                    now = clock()
                    out[head] = (reply, self.take_junk(), now - last)
                    if self._answered:  # (the start's own first answer is the start's load, measured there)
                        self._op_answered(op_of(bodies[head]), now - last)
                    else:
                        self._answering()
                        self._ops_answered.add(op_of(bodies[head]))
                    head += 1
                    grace = self.grace(timeout, op_of(bodies[head])) if head < len(bodies) else 0.0
                    last, deadline = now, now + timeout + grace
                    if head - base >= 8:
                        self._per_reply = (now - started) / (head - base)
            except (_Died, _Hung) as e:
                op = op_of(bodies[head])
                if isinstance(e, _Hung) and self._answered and op not in self._ops_answered \
                        and op not in self._op_load_seconds:
                    self._ops_hung.add(op)  # (it had the whole allowance: it hangs, it does not load)
                out[head] = (self._failure(e, timeout, grace, op), self.take_junk(), clock() - last)
                head += 1
        return out

    def _failure(self, what: _Died | _Hung, timeout: float, grace: float, op: str = "") -> CaseFailure:
        """The case at the head of the queue (``_case_failure``), kept as the last one said: a
        program that never starts is stopped with it (``_restart``)."""
        failure = self._case_failure(what, timeout, grace, op)
        self.last_failure = failure.detail.removeprefix(f"{self.label}: ")
        return failure

    def _case_failure(self, what: _Died | _Hung, timeout: float, grace: float, op: str) -> CaseFailure:
        """The case at the head of the queue: a crash (the program is gone) or a timeout (it is
        killed now); either way the next request starts it again. A program that wrote lines that
        are not its reply before that broke the protocol: the case is a crash quoting them."""
        if not self._answered:
            self.failed_kinds.append("died" if isinstance(what, _Died) else "hung")
        wrote = self._protocol_lines
        self._protocol_lines = []
        if isinstance(what, _Died):
            self.crashes += 1
            detail = self._death_detail("on this case")
            if wrote:
                return BackendCrash(f"{self.label}: protocol error: it wrote '{wrote[0]}' instead of a JSON reply, "
                                    f"then {detail}")
            return BackendCrash(f"{self.label}: {detail}")
        unread = self._unread_input()
        self.timeouts += 1
        self._stop()
        waited = f"{timeout:g} s"
        if grace:
            waited += f" (+{grace:g} s to start)" if not self._answered else f" (+{grace:g} s for its first {op!r})"
        if wrote:
            self.crashes += 1
            return BackendCrash(f"{self.label}: protocol error: it wrote '{wrote[0]}' instead of a JSON reply, and no "
                                f"reply within {waited}; killed, restarted for the next case")
        reading = ""
        if unread and unread == self._written:
            reading = f" (it has not read its input: the {unread} bytes of requests are still in the pipe)"
        return BackendTimeout(f"{self.label}: no answer within {waited}{reading}; killed, restarted for the next case")

    def _unread_input(self) -> int | None:
        """Bytes of requests still in the program's stdin pipe (Linux), or None if unknown."""
        if not self._stdin_open:
            return None
        try:
            import array
            import fcntl
            import termios

            count = array.array("i", [0])
            fcntl.ioctl(self._in_fd, termios.FIONREAD, count, True)
            return count[0]
        except (ImportError, OSError):
            return None

    def take_junk(self) -> list[str]:
        """Lines the program wrote that were not a reply (kept as notes of the case)."""
        if not self._junk:
            return []
        junk, self._junk = self._junk, []
        return junk

    def stderr_tail(self, lines: int = 6) -> str:
        text = self._stderr.decode("utf-8", "replace").strip()
        return " | ".join(text.splitlines()[-lines:])

    # -- pipes -----------------------------------------------------------------------------------

    def _write_some(self, pending: bytearray) -> None:
        """Write what the pipe takes now (stdin is non-blocking)."""
        try:
            n = os.write(self._in_fd, pending)
            self._written += n
        except BlockingIOError:  # the pipe is full: the program is not reading (yet)
            return
        except (BrokenPipeError, ConnectionResetError):
            # The program is gone (or closed its stdin), but the replies it wrote before that may
            # still be in the pipe: read them first, so the crash lands on the case it died on.
            self._stdin_closed()
            return
        del pending[:n]

    def _stdin_closed(self) -> None:
        self._stdin_open = False
        if self._writing:
            self._poll.unregister(self._in_fd)
            self._writing = False

    def _nap(self, waiting: int, deadline: float) -> None:
        """With ``waiting`` requests unanswered, sleep while about a quarter of them are answered
        instead of being woken by each reply (the program writes each one as it goes, as the
        protocol asks). Only when the pipes have nothing for us yet (a program faster than us is
        never waited for), when that is long enough to be worth a sleep (``NAP_MIN``; shorter
        sleeps overshoot by as much, and the program could run out of requests), at most
        ``NAP_MAX``; never past the deadline, never for a lone request."""
        per_reply = self._per_reply
        nap = per_reply * (waiting // 4)
        if NAP_MIN <= nap and per_reply * 4 <= NAP_MAX and not self._poll.poll(0):  # (nothing to read yet)
            time.sleep(min(nap, NAP_MAX, max(0.0, deadline - time.monotonic())))

    def _wait(self, deadline: float, want_write: bool) -> None:
        """Sleep until the program writes (or, with ``want_write``, can take more input). Once the
        program has exited, what it wrote is read and the next wait is ``_Died``, even when a
        child of its still holds the pipe open (stdout would never close)."""
        if self._leader_gone:
            if not self._read_what_is_left():
                raise _Died
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Hung
        if self._pid_fd is None and self.proc is not None:  # (no pidfd: look every quarter second)
            if exited(self.proc):
                self._leader_gone = True
                return
            remaining = min(remaining, 0.25)
        if want_write != self._writing:
            if want_write:
                self._poll.register(self._in_fd, select.POLLOUT)
            else:
                self._poll.unregister(self._in_fd)
            self._writing = want_write
        for fd, event in self._poll.poll(math.ceil(min(remaining, _POLL_SECONDS_MAX) * 1000)):
            if fd == self._pid_fd:
                self._poll.unregister(fd)
                self._leader_gone = True
            elif fd == self._out_fd:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise _Died
                self._buf += chunk
            elif fd == self._err_fd:
                self._read_stderr()
            elif event & (select.POLLERR | select.POLLHUP):  # stdin's reading end is gone; see _write_some
                self._stdin_closed()

    def _read_what_is_left(self) -> bool:
        """Read what the pipe holds from a program that has exited, without waiting; whether there was any."""
        got = False
        while any(fd == self._out_fd for fd, _ in self._poll.poll(0)):
            chunk = os.read(self._out_fd, 1 << 16)
            if not chunk:
                break
            self._buf += chunk
            got = True
        return got

    def _read_stderr(self) -> None:
        try:
            chunk = os.read(self._err_fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            self._poll.unregister(self._err_fd)
            return
        self._stderr += chunk
        if len(self._stderr) > _STDERR_KEPT:
            del self._stderr[:-_STDERR_KEPT]

    def _next_reply(self, rid: int) -> dict | None:
        """The reply with id ``rid`` if a complete one is buffered; other lines become junk notes."""
        buf = self._buf
        while (nl := buf.find(b"\n")) >= 0:
            line = bytes(buf[:nl])
            del buf[:nl + 1]
            reply = read_reply(line, rid)
            if isinstance(reply, dict) and reply.get("id") == rid:
                self._protocol_lines = []
                return scrubbed(reply) if b"\\u" in line else reply  # (only a \u escape spells a surrogate)
            if line.strip():
                shown = shown_line(line)
                self._protocol_lines.append(shown)
                self._junk.append(f"{self.label} wrote a line that is not the reply to request {rid}: {shown}")
        return None

    def _death_detail(self, when: str) -> str:
        proc = self.proc
        assert proc is not None  # called while the process that died is still ours
        wait_for_exit(proc, 2.0)  # (stdout closed but still alive: killed below)
        # what it said last, often the reason (llama.cpp's "terminate called after throwing ...")
        if self._writing:
            self._poll.unregister(self._in_fd)
            self._writing = False
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            ready = self._poll.poll(50)
            if not any(fd == self._err_fd for fd, _ in ready):
                break
            before = len(self._stderr)
            self._read_stderr()
            if len(self._stderr) == before:
                break
        gone = exited(proc)
        self._stop()  # (reaps it: its exit status is known from here)
        said = describe_exit(proc.returncode) if gone else "closed its output and was killed"
        tail = self.stderr_tail()
        return f"{said} {when}" + (f"; stderr: {tail}" if tail else "")
