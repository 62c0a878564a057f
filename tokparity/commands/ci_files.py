"""What a CI file named by the user may be written over: ``--junit`` replaces a JUnit report only,
and ``$GITHUB_STEP_SUMMARY`` appends to a Markdown file only. Whatever else a file there is (an
engine's module named in words no finder reads, a dataset's description), it is refused."""

from __future__ import annotations

import os
from pathlib import Path

SUMMARY_SUFFIXES = ("", ".md", ".txt")  # of a file $GITHUB_STEP_SUMMARY may append to


def not_a_summary(path: Path) -> str:
    """What ``path`` is where ``$GITHUB_STEP_SUMMARY`` may not append to it ("a program", "a .py
    file"), or "". A runner's summary file has no suffix and runs nothing; an engine's program or
    module does. The file a link names is judged, and a program by its first bytes: some
    filesystems mark every file executable."""
    real = Path(os.path.realpath(path))
    if not real.is_file():
        return ""
    if starts_as_a_program(real):
        return "a program"
    return f"a {real.suffix} file" if real.suffix.lower() not in SUMMARY_SUFFIXES else ""


def starts_as_a_program(path: Path) -> bool:
    """Whether ``path`` begins as a script (``#!``) or an ELF binary does."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head.startswith(b"#!") or head == b"\x7fELF"


def junit_or_empty(path: Path) -> bool:
    """Whether ``path`` is empty, or is XML (its first character ``<``) with a ``<testsuite``
    element in its first 4 KiB, as a JUnit report is. A file that cannot be read is neither."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return not text or (text.startswith(b"<") and b"<testsuite" in head)
