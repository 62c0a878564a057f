"""What a CI file named by the user may be written over: ``--junit`` replaces a JUnit report only,
and ``$GITHUB_STEP_SUMMARY`` appends to a Markdown file only. Whatever else a file there is (an
engine's module named in words no finder reads, a dataset's description), it is refused."""

from __future__ import annotations

import os
import re
from pathlib import Path

SUMMARY_SUFFIXES = ("", ".md", ".txt")  # of a file $GITHUB_STEP_SUMMARY may append to


def not_a_summary(path: Path) -> str:
    """What ``path`` is where ``$GITHUB_STEP_SUMMARY`` may not append to it ("a program", "a .py
    file"), or "". A runner's summary file has no suffix and runs nothing; an engine's program or
    module does. The file a link names is judged, and a program by its first bytes: some
    filesystems mark every file executable."""
    real = Path(os.path.realpath(path))
    if real.suffix.lower() not in SUMMARY_SUFFIXES:  # (a file not there yet too: the summary would make it)
        return f"a {real.suffix} file"
    return "a program" if real.is_file() and starts_as_a_program(real) else ""


def starts_as_a_program(path: Path) -> bool:
    """Whether ``path`` begins as a script (``#!``) or an ELF binary does."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head.startswith(b"#!") or head == b"\x7fELF"


# What may come before an XML file's first element: its declaration, comments, a doctype, blanks.
_PROLOG = re.compile(rb"(?:\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*", re.DOTALL)


JUNIT_BYTES = 64 << 20  # a JUnit report larger than this is not one tokparity wrote


def junit_or_empty(path: Path) -> bool:
    """Whether ``path`` is empty, or is XML whose root element is ``<testsuites>`` or
    ``<testsuite>``, as a JUnit report's is: well-formed to its end, with no DOCTYPE (which a
    report never has, and which could declare entities). A file that cannot be read is neither."""
    try:
        with open(path, "rb") as f:
            data = f.read(JUNIT_BYTES + 1)
    except OSError:
        return False
    text = data.removeprefix(b"\xef\xbb\xbf")
    if not text.strip():
        return True
    prolog = _PROLOG.match(text)  # (it matches every text, at least as nothing)
    start = prolog.end() if prolog else 0
    if len(data) > JUNIT_BYTES or b"<!DOCTYPE" in text[:start] or not re.match(rb"<testsuites?[\s/>]", text[start:]):
        return False
    from xml.etree import ElementTree
    try:
        return ElementTree.fromstring(text).tag in ("testsuites", "testsuite")
    except ElementTree.ParseError:
        return False
