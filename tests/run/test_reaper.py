"""The reaper beside a run that starts a local Ray (tokparity/run/reaper.py), without Ray: a run
that is killed with SIGKILL leaves nothing it started, even a process that lost the mark from its
environment and whose parent died first (as Ray's agents do); a run that ends well keeps its
own children, marked or not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import tokparity

ROOT = Path(tokparity.__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="the reaper reads /proc (Linux)")

# A run: its reaper, a marked child, and a grandchild whose environment holds no mark (env -i),
# whose parent exits two seconds later. Then it prints the pids and waits to be killed, or ends well.
RUN = textwrap.dedent("""
    import os, subprocess, sys, time
    from tokparity.run import reaper
    watch = reaper.Reaper(reaper.marked())
    marked = subprocess.Popen(["sleep", "300"])
    lost = subprocess.Popen(["sh", "-c", "env -i sleep 300 & echo $!; sleep 2"], stdout=subprocess.PIPE, text=True)
    orphan = int(lost.stdout.readline())
    lost.wait()  # (meanwhile the reaper, which looks twice a second, saw the orphan below the run)
    print(marked.pid, orphan, flush=True)
    if sys.argv[1] == "well":
        watch.close()
        print("closed", flush=True)
    time.sleep(300)
""")


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone_within(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


def start(how: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, "-c", RUN, how], stdout=subprocess.PIPE, text=True, env=env)


def test_a_killed_run_leaves_no_process_it_started_even_one_without_the_mark():
    run = start("killed")
    try:
        marked, orphan = map(int, run.stdout.readline().split())
        assert alive(marked) and alive(orphan)
        assert b"TOKPARITY_RAY_RUN" not in Path(f"/proc/{orphan}/environ").read_bytes()
        run.send_signal(signal.SIGKILL)
        run.wait()
        assert gone_within([marked, orphan], 30) == []
    finally:
        run.kill()
        run.wait()


def test_a_run_that_ends_well_keeps_its_own_children():
    """Its Ray is stopped already; the reaper looks once more, for the mark only, and spares the
    run's children (the run ends them itself)."""
    run = start("well")
    try:
        marked, orphan = map(int, run.stdout.readline().split())
        assert run.stdout.readline() == "closed\n"
        assert alive(marked) and alive(orphan)
    finally:
        run.kill()
        run.wait()
        for pid in (marked, orphan):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
