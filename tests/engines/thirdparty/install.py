"""Install the pinned JavaScript tokenizers of this folder once: ``npm ci`` into ./node_modules.

    python tests/engines/thirdparty/install.py

package.json pins the four libraries and package-lock.json everything they pull in. The install
runs with ``--ignore-scripts`` (no package may download anything at install time; transformers.js
needs none of its install scripts to tokenize) and is skipped when node_modules was installed
from this very lock file (its sha256 is kept in node_modules/.tokparity-lock). About 530 MB and
10-20 s, most of it onnxruntime, which transformers.js depends on even for tokenizers alone.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
STAMP = HERE / "node_modules" / ".tokparity-lock"
COMMAND = f"npm ci --prefix {HERE} --ignore-scripts --no-audit --no-fund"


def lock_digest() -> str:
    return hashlib.sha256((HERE / "package-lock.json").read_bytes()).hexdigest()


def missing_tools() -> list[str]:
    return [tool for tool in ("node", "npm") if shutil.which(tool) is None]


def installed() -> bool:
    return STAMP.is_file() and STAMP.read_text().strip() == lock_digest()


def install(quiet: bool = False) -> None:
    """Run ``npm ci`` unless node_modules is already this lock file's; raise on failure."""
    if installed():
        return
    missing = missing_tools()
    if missing:
        raise RuntimeError(f"{' and '.join(missing)} not found: install Node.js 20+ with npm, then run {COMMAND}")
    done = subprocess.run(COMMAND.split(), capture_output=quiet, text=True)
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-5:] if quiet else []
        raise RuntimeError(f"`{COMMAND}` failed (exit {done.returncode})" + (": " + " / ".join(tail) if tail else ""))
    STAMP.write_text(lock_digest() + "\n")


if __name__ == "__main__":
    try:
        install()
    except RuntimeError as e:
        sys.exit(f"install.py: {e}")
    print(f"installed: {HERE / 'node_modules'}")
