"""Parquet and Arrow corpora, read with pyarrow a batch at a time.

A row is a case: its text from ``--text-column`` (default ``text``), its id from ``--id-column``
(default: ``file:row``, the row counted from 0 in its file), its tags from a ``tags`` column
when there is one (a struct or a map, as JSONL's ``tags`` object).

A text column that is not text (an integer column, binary) is an error: the wrong column was
named, and no case of it could be run. A null text in a text column is data, common in real
pipelines (a row whose document was filtered out): that row is skipped, and one note per file
names how many and the first row, so that nothing is dropped unseen.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from tokparity.corpus.base import Case
from tokparity.corpus.pipeline import INSTALL_HINT, ReadOptions
from tokparity.errors import BadCorpus
from tokparity.textview import shown_path

BATCH_ROWS = 4096  # rows converted to Python at a time: a few MB of text at most


def _pyarrow(path: Path, kind: str):
    try:
        import pyarrow
        import pyarrow.ipc
        import pyarrow.parquet
    except ImportError:
        raise BadCorpus(f"{shown_path(path)}: a {kind} file; reading it needs pyarrow: {INSTALL_HINT}") from None
    return pyarrow


def read_parquet(path: Path, corpus: str, options: ReadOptions) -> Iterator:
    pa = _pyarrow(path, "Parquet")
    try:
        # pre_buffer off: on, pyarrow reads the whole file's column chunks ahead (a 90 MB file held 93 MB)
        parquet = pa.parquet.ParquetFile(path, pre_buffer=False)
    except (pa.ArrowException, OSError) as e:
        raise _unreadable(path, "Parquet", e, 0) from None
    with parquet:
        columns = _columns(path, parquet.schema_arrow, options)
        batches = parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns, use_threads=False)
        yield from _cases(path, corpus, options, _guarded(pa, path, "Parquet", batches))


def read_arrow(path: Path, corpus: str, options: ReadOptions, stream: bool) -> Iterator:
    """An Arrow IPC stream (``datasets``' ``.arrow`` files) or IPC file, one record batch at a time."""
    pa = _pyarrow(path, "Arrow")
    kind = "Arrow stream" if stream else "Arrow"
    try:
        source = pa.OSFile(str(path))  # read, not memory-mapped: the batches read are freed as they go
    except (pa.ArrowException, OSError) as e:
        raise _unreadable(path, kind, e, 0) from None
    with source:
        try:
            reader = pa.ipc.open_stream(source) if stream else pa.ipc.open_file(source)
        except (pa.ArrowException, OSError) as e:
            raise _unreadable(path, kind, e, 0) from None
        _columns(path, reader.schema, options)
        batches = iter(reader) if stream else (reader.get_batch(i) for i in range(reader.num_record_batches))
        yield from _cases(path, corpus, options, _guarded(pa, path, kind, batches))


def _columns(path: Path, schema, options: ReadOptions) -> list[str]:
    """The columns read: the text, the id, the tags; a missing one is named with the columns there are."""
    names = list(schema.names)
    for option, column in (("--text-column", options.text_column), ("--id-column", options.id_column)):
        if column is not None and column not in names:
            shown = ", ".join(names[:20]) + (", …" if len(names) > 20 else "")
            raise BadCorpus(f"{shown_path(path)}: no column {column!r}; it has: {shown} (name one with {option})")
    kind = schema.field(options.text_column).type
    if not _is_text(kind):
        raise BadCorpus(f"{shown_path(path)}: column {options.text_column!r} holds {kind}, not text; name the text "
                        "column with --text-column")
    wanted = [options.text_column] + ([options.id_column] if options.id_column else [])
    return list(dict.fromkeys(wanted + (["tags"] if "tags" in names and "tags" not in wanted else [])))


def _is_text(kind) -> bool:
    import pyarrow.types as t

    return t.is_string(kind) or t.is_large_string(kind) or getattr(t, "is_string_view", lambda _: False)(kind)


def _guarded(pa, path: Path, kind: str, batches: Iterable) -> Iterator:
    """The batches; a corrupt or truncated file met on the way is one ``BadCorpus`` naming it and
    the first row not read (the cases before it have been yielded)."""
    row = 0
    iterator = iter(batches)
    while True:
        try:
            batch = next(iterator)
        except StopIteration:
            return
        except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
            raise _unreadable(path, kind, e, row) from None
        row += batch.num_rows
        yield batch


def _unreadable(path: Path, kind: str, error: Exception, row: int):
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    where = f" at row {row}" if row else ""
    return BadCorpus(f"{shown_path(path)}: not a readable {kind} file{where} ({reason[:200]}); it is corrupt or "
                     "truncated: copy it again (the cases before it were run)")


def _cases(path: Path, corpus: str, options: ReadOptions, batches: Iterable) -> Iterator:
    row, nulls, first_null = 0, 0, -1
    for batch in batches:
        try:
            texts = batch.column(options.text_column).to_pylist()
            ids = batch.column(options.id_column).to_pylist() if options.id_column else None
            tags = batch.column("tags").to_pylist() if "tags" in batch.schema.names else None
        except UnicodeDecodeError as e:
            raise BadCorpus(f"{shown_path(path)}: a row from {row} holds invalid UTF-8 ({e.reason}); corpus text "
                            "must be UTF-8") from None
        for i, text in enumerate(texts):
            if text is None:
                nulls, first_null = nulls + 1, first_null if nulls else row + i
                continue
            case_id = ids[i] if ids is not None and ids[i] is not None else f"{path.name}:{row + i}"
            yield Case(str(case_id), text, corpus, _tags(tags[i]) if tags is not None else {})
        row += len(texts)
    if nulls:
        print(f"tokparity: note: {shown_path(path)}: {nulls} row(s) with no text (null in column "
              f"{options.text_column!r}) skipped, the first at row {first_null}", file=sys.stderr, flush=True)


def _tags(value: object) -> dict:
    """A ``tags`` cell as JSONL's ``tags`` object: a struct (dict) or a map (list of pairs), nulls left out."""
    if isinstance(value, list):
        value = dict(pair for pair in value if isinstance(pair, tuple) and len(pair) == 2)
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if v is not None}
