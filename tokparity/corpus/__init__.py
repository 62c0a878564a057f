"""Corpora: the texts every backend is run on.

A corpus is a JSONL file of records ``{"id": "ru-0003", "text": "…", "tags": {...}}`` (text is a
JSON string, so any whitespace, control character or emoji survives), or a plain ``.txt`` file
read one case per line. Named corpora:

* ``multilingual``, ``emoji``, ``edge``: committed in the repository's ``corpora/`` folder;
* ``llama.cpp-tests``: the texts of llama.cpp's ``ggml-vocab-*.gguf.inp`` files in the zoo,
  read at run time (not committed);
* ``all``: every one of the above.

Files are streamed, never loaded whole, and a bad line is reported with its file and line number.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tokparity.errors import TokparityError

COMMITTED = ("multilingual", "emoji", "edge")
NAMES = COMMITTED + ("llama.cpp-tests",)


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    corpus: str
    tags: dict = field(default_factory=dict, compare=False, hash=False)


class BadCorpus(TokparityError):
    pass


def corpora_dir() -> Path:
    """Where the committed corpora are: ``$TOKPARITY_CORPORA``, the source checkout, or the
    copy installed beside the package (``<prefix>/share/tokparity/corpora``)."""
    env = os.environ.get("TOKPARITY_CORPORA")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parents[2] / "corpora",
                   Path(sys.prefix) / "share" / "tokparity" / "corpora"]
    for c in candidates:
        if (c / "edge.jsonl").is_file() or (c / "emoji.jsonl").is_file():
            return c
    raise BadCorpus("the committed corpora are not found (looked in "
                    f"{', '.join(str(c) for c in candidates)}); set TOKPARITY_CORPORA to the repository's corpora/ folder")


def read_jsonl(path: str | os.PathLike, corpus: str | None = None) -> Iterator[Case]:
    path = Path(path)
    corpus = corpus or path.stem
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise BadCorpus(f"{path}: no such corpus file") from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise BadCorpus(f"{path}:{lineno}: invalid UTF-8 at byte {e.start} of the line; "
                                "corpus files must be UTF-8 (escape other bytes in the JSON string)") from None
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise BadCorpus(f"{path}:{lineno}: invalid JSON ({e.msg} at column {e.colno})") from None
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise BadCorpus(f"{path}:{lineno}: a record must be an object with a string 'text'")
            tags = record.get("tags") or {}
            if not isinstance(tags, dict):
                raise BadCorpus(f"{path}:{lineno}: 'tags' must be an object")
            yield Case(str(record.get("id") or f"{corpus}-{lineno}"), record["text"], corpus, tags)


def read_lines(path: str | os.PathLike, corpus: str | None = None) -> Iterator[Case]:
    """A plain text file, one case per non-empty line (the newline itself is not part of it)."""
    path = Path(path)
    corpus = corpus or path.stem
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise BadCorpus(f"{path}: no such corpus file") from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                text = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise BadCorpus(f"{path}:{lineno}: invalid UTF-8 at byte {e.start} of the line") from None
            if text:
                yield Case(f"{corpus}-{lineno}", text, corpus, {"kind": "line"})


def llama_cpp_tests() -> Iterator[Case]:
    """Every distinct text of the zoo's ``.inp`` files, tagged with the first model that has it."""
    from tokparity.zoo import load_manifest, resolve_model
    from tokparity.zoo.golden import read_golden

    seen: set[str] = set()
    for name, model in load_manifest().models.items():
        if "golden_inp" not in model.files:
            continue
        files = resolve_model(name).files
        for case in read_golden(files["golden_inp"], files["golden_out"]):
            if case.text not in seen:
                seen.add(case.text)
                yield Case(f"llama.cpp-{name}-{case.index:02d}", case.text, "llama.cpp-tests",
                           {"kind": "llama.cpp-test", "model": name})


_BUILTIN: dict[str, list[Case]] = {}


def _builtin(name: str) -> list[Case]:
    """The corpora tokparity ships (a few thousand cases), parsed once per process: a run reads
    them once per model. User files stream instead; they may be any size."""
    found = _BUILTIN.get(name)
    if found is None:
        found = list(read_jsonl(corpora_dir() / f"{name}.jsonl", name) if name in COMMITTED else llama_cpp_tests())
        if found:  # (llama.cpp-tests is empty until the zoo is fetched: read it again then)
            _BUILTIN[name] = found
    return found


def load_corpus(spec: str) -> Iterator[Case]:
    """Cases of a named corpus, ``all``, or a ``.jsonl`` / ``.txt`` file path."""
    if spec == "all":
        for name in NAMES:
            yield from load_corpus(name)
        return
    if spec in COMMITTED or spec == "llama.cpp-tests":
        yield from _builtin(spec)
        return
    path = Path(spec)
    if path.is_file():
        yield from (read_lines(path) if path.suffix == ".txt" else read_jsonl(path))
        return
    raise BadCorpus(f"unknown corpus {spec!r}; known: {', '.join(NAMES)}, all, or a path to a .jsonl / .txt file")
