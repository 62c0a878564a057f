"""Install the pinned JavaScript tokenizers of this folder once per machine: ``npm ci``.

    python tests/engines/thirdparty/install.py

package.json pins the libraries and package-lock.json everything they pull in. The install runs
with ``--ignore-scripts``: no package may download anything at install time, and transformers.js
needs none of its install scripts to tokenize. About 530 MB, most of it onnxruntime, which
transformers.js depends on even for tokenizers alone.

The packages go to a folder of the machine's cache named by the lock file's sha256, and
./node_modules links to it. A fresh clone of the same lock file reuses them at once. A lock on the
cache makes two test processes that install at the same time take turns.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINK = HERE / "node_modules"
STAMP_NAME = ".tokparity-lock"
COMMAND = "python tests/engines/thirdparty/install.py"


def lock_digest() -> str:
    return hashlib.sha256((HERE / "package-lock.json").read_bytes()).hexdigest()


def cache_home() -> Path:
    """Where the installs are kept: beside tokparity's own cache, never inside a test's TOKPARITY_CACHE."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tokparity" / "test-npm"


def missing_tools() -> list[str]:
    return [tool for tool in ("node", "npm") if shutil.which(tool) is None]


def _holds_this_lock(modules: Path) -> bool:
    stamp = modules / STAMP_NAME
    return stamp.is_file() and stamp.read_text().strip() == lock_digest()


def installed() -> bool:
    return _holds_this_lock(LINK)


def install(quiet: bool = False) -> None:
    """Link ./node_modules to this lock file's install, running ``npm ci`` first where the cache has
    none; raise on failure."""
    if installed():
        return
    missing = missing_tools()
    if missing:
        raise RuntimeError(f"{' and '.join(missing)} not found: install Node.js 20+ with npm, then run {COMMAND}")
    folder = cache_home() / lock_digest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # (released when the file closes)
        if installed():  # (by a test process beside this one, while this one waited)
            return
        if not _holds_this_lock(folder / "node_modules"):
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(HERE / name, folder / name)
            command = ["npm", "ci", "--prefix", str(folder), "--ignore-scripts", "--no-audit", "--no-fund"]
            done = subprocess.run(command, capture_output=quiet, text=True)
            if done.returncode != 0:
                tail = (done.stderr or "").strip().splitlines()[-5:] if quiet else []
                raise RuntimeError(f"`{' '.join(command)}` failed (exit {done.returncode})"
                                   + (": " + " / ".join(tail) if tail else ""))
            (folder / "node_modules" / STAMP_NAME).write_text(lock_digest() + "\n")
        if LINK.is_dir() and not LINK.is_symlink():  # (an install of another lock file, made here before)
            shutil.rmtree(LINK)
        made = LINK.with_name(f".node_modules.{os.getpid()}")
        made.unlink(missing_ok=True)
        made.symlink_to(folder / "node_modules", target_is_directory=True)
        os.replace(made, LINK)  # (at once: a node process reading through the old link never meets none)


if __name__ == "__main__":
    try:
        install()
    except RuntimeError as e:
        sys.exit(f"install.py: {e}")
    print(f"installed: {LINK} -> {LINK.resolve()}")
