"""Corpora: the texts every backend is run on.

A corpus is a JSONL file of records ``{"id": "ru-0003", "text": "…", "tags": {...}}`` (text is a
JSON string, so any whitespace, control character or emoji survives), or a plain ``.txt`` file
read one case per line, either one also gzip- or zstd-compressed; or a Parquet file, a folder of
them, a saved Hugging Face dataset, or a glob of any of these (``tokparity.corpus.pipeline``).
Named corpora:

* ``multilingual``, ``emoji``, ``edge``, ``seams``: committed in the repository's ``corpora/``
  folder (``seams``: the Unicode and regex-engine seams of ``tokparity.fuzz.seams``, compact);
* ``llama.cpp-tests``: the texts of llama.cpp's ``ggml-vocab-*.gguf.inp`` files in the zoo,
  read at run time (not committed);
* ``all``: every one of the above;
* ``chats``: conversations, for ``compare --ops chat`` (tokparity.chat.conversation): committed
  in ``corpora/chats.jsonl``, not part of ``all``. A JSONL line with ``messages`` and no ``text``
  is a conversation in any file.

Files are streamed, never loaded whole, and a bad line is reported with its file and line number.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from tokparity.corpus import tables
from tokparity.corpus.base import CHATS, COMMITTED, NAMES, Case
from tokparity.corpus.pipeline import (
    ReadOptions,
    corpus_files,
    corpus_name,
    file_kind,
    is_text_lines,
    open_corpus,
    sampled,
    split_options,
)
from tokparity.errors import BadCorpus
from tokparity.textview import shown_path

# How many bytes of a line a text of N characters can take: UTF-8 needs at most 4 bytes a
# character; in JSON a character outside the BMP may be written as two \uXXXX escapes (12
# bytes); the id and the tags of a record get the slack.
TXT_BYTES_PER_CHAR, JSON_BYTES_PER_CHAR = 4, 12
RECORD_SLACK = 1 << 20
_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"
_LONE_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # \ud800-\udfff in JSON


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


def _decompression_errors() -> tuple[type[BaseException], ...]:
    """What a damaged gzip or zstd stream raises, besides ``OSError`` (zstandard only if in use)."""
    zstandard = sys.modules.get("zstandard")
    return (gzip.BadGzipFile, EOFError, zlib.error) + ((zstandard.ZstdError,) if zstandard is not None else ())


def _raw_lines(fh: BinaryIO, path: Path, max_bytes: int | None) -> Iterator[tuple[int, bytes, int]]:
    """``(line number, bytes, 0)`` for each line, or ``(line number, b"", length)`` for a line
    longer than ``max_bytes``: that one is read through in chunks, never held whole."""
    lineno = 0
    try:
        while True:
            raw = fh.readline(max_bytes + 1) if max_bytes else fh.readline()
            if not raw:
                return
            lineno += 1
            if lineno == 1 and raw.startswith(_BOM):  # a byte order mark some editors write: not text
                raw = raw[len(_BOM):]
            if max_bytes and len(raw) > max_bytes and not raw.endswith(b"\n"):
                length = len(raw)
                while not raw.endswith(b"\n"):
                    raw = fh.readline(_CHUNK)
                    if not raw:
                        break
                    length += len(raw)
                yield lineno, b"", length
            else:
                yield lineno, raw, 0
    except _decompression_errors() as e:
        raise BadCorpus(f"{shown_path(path)}:{lineno + 1}: the compressed data is truncated or corrupt ({e}); copy "
                        "the file again (the cases before this line were read)") from None
    except OSError as e:
        raise BadCorpus(f"{shown_path(path)}:{lineno + 1}: cannot read the corpus file ({e.strerror or e})") from None


def _parse_record(path: Path, lineno: int, line: str) -> dict:
    where = f"{shown_path(path)}:{lineno}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise BadCorpus(f"{where}: invalid JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise BadCorpus(f"{where}: JSON nested too deeply to read; a record is an object with a string "
                        "'text' (and an 'id' and 'tags')") from None
    except ValueError as e:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise BadCorpus(f"{where}: a number too long to read ({str(e).split(';')[0]}); write it as a string") from None
    if isinstance(record, dict) and "text" not in record and "messages" in record:  # a conversation (--ops chat)
        from tokparity.chat.conversation import CONVERSATION_TAG, Conversation
        from tokparity.errors import BadConversation
        try:
            tags = record["tags"] if isinstance(record.get("tags"), dict) else {}
            return record | {"text": Conversation.from_record(record, where).to_text(),
                             "tags": tags | {CONVERSATION_TAG: "yes"}}
        except BadConversation as e:
            raise BadCorpus(str(e)) from None
    if not isinstance(record, dict) or not isinstance(record.get("text"), str):
        raise BadCorpus(f"{where}: a record must be an object with a string 'text' (or, for --ops chat, "
                        "a list of 'messages')")
    return record


def _check_unicode(path: Path, lineno: int, raw: bytes, record: dict) -> None:
    """A lone surrogate (``"\\ud800"`` in the JSON) is not a character: no UTF-8 engine, journal
    or report can hold it. Only JSON escapes make one, so only lines with such an escape are checked."""
    if not _LONE_SURROGATE_ESCAPE.search(raw):
        return
    for key in ("text", "id", "tags"):
        try:
            json.dumps(record.get(key), ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as e:
            bad = e.object[e.start]
            raise BadCorpus(f"{shown_path(path)}:{lineno}: the record's {key!r} holds a lone surrogate "
                            f"(\\u{ord(bad):04x}), which is not valid Unicode; remove it or write a whole "
                            "character (a pair such as \\ud83d\\ude00)") from None


def read_jsonl(path: str | os.PathLike, corpus: str | None = None, max_chars: int | None = None) -> Iterator[Case]:
    """The records of a JSONL corpus. With ``max_chars``, a line too long to hold a text of that
    many characters is not read: it comes as a ``Case`` with ``unread_bytes``."""
    path = Path(path)
    corpus = corpus or corpus_name(path)
    max_bytes = JSON_BYTES_PER_CHAR * max_chars + RECORD_SLACK if max_chars else None
    with open_corpus(path) as fh:
        for lineno, raw, unread in _raw_lines(fh, path, max_bytes):
            if unread:
                yield Case(f"{corpus}-{lineno}", "", corpus, {}, unread_bytes=unread)
                continue
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise BadCorpus(f"{shown_path(path)}:{lineno}: invalid UTF-8 at byte {e.start} of the line; "
                                "corpus files must be UTF-8 (escape other bytes in the JSON string)") from None
            record = _parse_record(path, lineno, line)
            tags = record.get("tags") or {}
            if not isinstance(tags, dict):
                raise BadCorpus(f"{shown_path(path)}:{lineno}: 'tags' must be an object")
            _check_unicode(path, lineno, raw, record)
            yield Case(str(record.get("id") or f"{corpus}-{lineno}"), record["text"], corpus, tags)


def read_lines(path: str | os.PathLike, corpus: str | None = None, max_chars: int | None = None) -> Iterator[Case]:
    """A plain text file, one case per non-empty line (the newline itself is not part of it).
    ``max_chars``: as ``read_jsonl``."""
    path = Path(path)
    corpus = corpus or corpus_name(path)
    max_bytes = TXT_BYTES_PER_CHAR * max_chars + 2 if max_chars else None  # + the line's \r\n
    with open_corpus(path) as fh:
        for lineno, raw, unread in _raw_lines(fh, path, max_bytes):
            if unread:
                yield Case(f"{corpus}-{lineno}", "", corpus, {"kind": "line"}, unread_bytes=unread)
                continue
            try:
                text = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise BadCorpus(f"{shown_path(path)}:{lineno}: invalid UTF-8 at byte {e.start} of the line") from None
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
        found = list(read_jsonl(corpora_dir() / f"{name}.jsonl", name) if name in COMMITTED + (CHATS,)
                     else llama_cpp_tests())
        if found:  # (llama.cpp-tests is empty until the zoo is fetched: read it again then)
            _BUILTIN[name] = found
    return found


def load_corpus(spec: str, max_chars: int | None = None) -> Iterator[Case]:
    """Cases of a named corpus, ``all``, a file, a folder or a glob (``tokparity.corpus.pipeline``),
    with the reading options the spec carries (``pipeline.with_options``). ``max_chars``: a line
    of a JSONL or text file too long to hold a text of that many characters is not read
    (``unread_bytes``), so a cap keeps a run's memory bounded whatever the file holds."""
    name, options = split_options(spec)
    yield from sampled(_all_cases(name, options, max_chars), options)


def numbered_cases(corpora: list[str], max_chars: int | None) -> Iterator[tuple[int, Case]]:
    """(position, case) over every corpus in order: a case's position is its key in the journal."""
    n = -1
    for corpus in corpora:
        for case in load_corpus(corpus, max_chars):
            n += 1
            yield n, case


def is_too_long(case: Case, max_chars: int | None) -> bool:
    """A case not to run: longer than ``max_chars``, or its line not even read."""
    return bool(case.unread_bytes or (max_chars and len(case.text) > max_chars))


def _all_cases(spec: str, options: ReadOptions, max_chars: int | None) -> Iterator[Case]:
    if spec == "all":
        for name in NAMES:
            yield from _builtin(name)
        return
    if spec in COMMITTED or spec in ("llama.cpp-tests", CHATS):
        yield from _builtin(spec)
        return
    if spec == "ids":  # no texts: id sequences each model's run makes from its vocabulary (tokparity.corpus.ids)
        return
    for path, corpus in corpus_files(spec):
        yield from read_file(path, corpus, options, max_chars)


def read_file(path: Path, corpus: str, options: ReadOptions = ReadOptions(),
              max_chars: int | None = None) -> Iterator[Case]:
    """One corpus file's cases, read as its first bytes say (Parquet, Arrow, compressed or plain)."""
    kind = file_kind(path)
    if kind == "parquet":
        yield from tables.read_parquet(path, corpus, options)
    elif kind in ("arrow-file", "arrow-stream"):
        yield from tables.read_arrow(path, corpus, options, stream=kind == "arrow-stream")
    elif is_text_lines(path):
        yield from read_lines(path, corpus, max_chars)
    else:
        yield from read_jsonl(path, corpus, max_chars)
