"""Two tokparity processes share a cache by taking turns on a lock. The one that waits says so
once (a build of llama-server can hold the lock for minutes), and the one that finds it free says
nothing."""

from __future__ import annotations

import subprocess
import sys

from tokparity.zoo.fetch import file_lock

HOLD = "import sys, time; from pathlib import Path; from tokparity.zoo.fetch import file_lock\n" \
       "with file_lock(Path(sys.argv[1])):\n    print('held', flush=True)\n    time.sleep(1.5)\n"


def test_a_process_that_waits_for_the_lock_says_so_once(tmp_path):
    lock = tmp_path / "cache" / "x.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        said: list[str] = []
        with file_lock(lock, lambda: said.append("waiting")):
            pass
        assert said == ["waiting"]
        with file_lock(lock, lambda: said.append("again")):
            pass
        assert said == ["waiting"]
    finally:
        holder.kill()
        holder.wait()
