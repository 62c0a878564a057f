"""Corpora as data pipelines keep them: which files a ``-c`` names, what kind each file is, how
they are read, and a seeded sample of the cases.

``-c`` takes, besides a corpus name or a ``.jsonl`` / ``.txt`` file:

* a Parquet file, or a folder of them (searched recursively, so Hive-style ``year=2024/`` folders work);
* a Hugging Face ``datasets`` folder written by ``save_to_disk`` (``state.json`` lists its ``.arrow``
  files; a ``DatasetDict`` folder's ``dataset_dict.json`` lists its splits);
* a ``.gz`` or ``.zst`` JSONL or text file;
* a glob, quoted so the shell leaves it alone (``-c 'data/*.parquet'``): tokparity expands it.

A file's kind is read from its first bytes, not guessed from its name: Parquet starts with ``PAR1``,
gzip with ``1f 8b``, zstd with ``28 b5 2f fd``, an Arrow IPC file with ``ARROW1``; a ``.arrow`` file
that is none of these is an Arrow IPC *stream* (what ``datasets`` writes). Everything is read in
batches (a Parquet row group's slice, an Arrow record batch, a line), never whole.

The reading options (``--text-column``, ``--id-column``, ``--sample``, ``--fraction``, ``--seed``)
ride inside the corpus spec string, after a NUL (``with_options``): no path or command-line
argument can hold a NUL, and every layer that passes corpora along (the journal's stored
arguments, worker processes, a cluster) then carries them unchanged.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import io
import json
import os
import random
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

from tokparity.corpus.base import NAMES
from tokparity.errors import BadCorpus
from tokparity.textview import shown_path

PARQUET_MAGIC, GZIP_MAGIC, ZSTD_MAGIC, ARROW_FILE_MAGIC = b"PAR1", b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"ARROW1"
COMPRESSED_SUFFIXES = (".gz", ".zst", ".zstd")
_OPTIONS_MARK = "\0"
INSTALL_HINT = "pip install 'tokparity[data]'"


@dataclass(frozen=True)
class ReadOptions:
    """How a corpus is read. ``id_column`` None: a row's id is ``file:row`` (row from 0 in its file).
    ``sample``: exactly that many cases (all of them when there are fewer), chosen by reservoir
    sampling; ``fraction``: each case kept with that probability. Both are seeded by ``seed``."""

    text_column: str = "text"
    id_column: str | None = None
    sample: int | None = None
    fraction: float | None = None
    seed: int = 0


def with_options(spec: str, options: ReadOptions) -> str:
    """``spec`` carrying ``options`` (unchanged when they are the defaults)."""
    if options == ReadOptions():
        return spec
    return spec + _OPTIONS_MARK + json.dumps(asdict(options), sort_keys=True)


def split_options(spec: str) -> tuple[str, ReadOptions]:
    """The path or name of a spec and its reading options (``with_options`` undone)."""
    name, mark, stored = spec.partition(_OPTIONS_MARK)
    return name, ReadOptions(**json.loads(stored)) if mark else ReadOptions()


# -- which files -------------------------------------------------------------------------------

def corpus_files(spec: str) -> list[tuple[Path, str]]:
    """The files a path, folder or glob names, in reading order, each with the corpus name its
    cases carry (a file's stem; a folder's name for the files found in it)."""
    path = Path(os.path.expanduser(spec))
    if path.is_dir():
        _no_link_out(path)
        return [(_inside(f, path), path.resolve().name) for f in folder_files(path)]
    if path.exists() and not path.is_file():  # a FIFO or a device may never end a line
        raise BadCorpus(f"{shown_path(path)}: not a regular file; -c takes a corpus name, a file, a folder of "
                        "Parquet files or a dataset (save a stream to a file first)")
    if path.is_file():
        _no_link_out(path.parent)
        return [(_inside(path, path.parent), corpus_name(path))]
    if glob.has_magic(spec):
        matches = sorted(glob.glob(os.path.expanduser(spec), recursive=True))
        if not matches:
            raise BadCorpus(f"-c {shown_path(spec)}: the pattern matches no file; check it (quote it, so that "
                            "tokparity expands it, not the shell)")
        # (a folder the pattern goes through may be a link too: every match stays under the pattern's own folder)
        base = Path(os.path.expanduser(spec))
        while glob.has_magic(str(base)):
            base = base.parent
        _no_link_out(base)
        return [found for m in matches for found in corpus_files(str(_inside(Path(m), base)))]
    raise BadCorpus(f"unknown corpus {shown_path(spec)!r}; known: {', '.join(NAMES)}, all, or a path to a .jsonl / "
                    ".txt / .parquet file (or .gz / .zst), a folder of Parquet files, a saved dataset, or a glob")


def _inside(path: Path, folder: Path) -> Path:
    """``path``, a corpus file of ``folder``, once it is not a link out of that folder. A corpus
    may come from a pull request: ``corpora/extra.txt`` linked to ``/proc/self/environ`` or to
    the journal key would put a secret in the reports."""
    try:
        real, root = Path(os.path.realpath(path)), Path(os.path.realpath(_cache_root(folder)))
    except (OSError, RuntimeError, ValueError) as e:
        raise BadCorpus(f"{shown_path(path)}: cannot read this corpus file ({e})") from None
    if not real.is_relative_to(root):
        raise BadCorpus(f"{shown_path(path)}: is a link to {shown_path(real)}, outside its folder "
                        f"{shown_path(folder)}; a corpus file is read only inside its folder: name the file "
                        "it points to, or copy it there")
    try:
        names = os.stat(real).st_nlink if real.is_file() else 1
    except OSError:
        names = 1  # (said when it is read)
    if names > 1:  # (its other name may be anywhere: a hard link to the journal key reads as the key)
        raise BadCorpus(f"{shown_path(path)}: is a hard link ({names} names for one file), and its other names "
                        "may lie outside its folder; copy it to a file of its own")
    return path


def _no_link_out(folder: Path) -> None:
    """Refused where a folder on the way to a corpus, as the spec names it, is a link out of the
    folder that holds it: a cloned ``corpora/data`` linked to ``~/.ssh`` would put a secret in the
    reports. A relative spec's way starts at the current folder. A link within its own folder
    (macOS's ``/tmp``, into ``/private``) is a folder's other name and is followed."""
    way = Path.cwd() if not folder.is_absolute() else Path(folder.anchor)
    for k, part in enumerate(folder.parts[1 if folder.is_absolute() else 0:], start=1 if folder.is_absolute() else 0):
        way = way / part
        if part in (".", "..") or not way.is_symlink():
            continue
        named = Path(*folder.parts[:k + 1])  # (as the spec names it)
        try:
            real, holder = Path(os.path.realpath(way)), Path(os.path.realpath(way.parent))
        except (OSError, RuntimeError, ValueError) as e:
            raise BadCorpus(f"{shown_path(named)}: cannot read this corpus folder ({e})") from None
        if not real.is_relative_to(holder):
            raise BadCorpus(f"{shown_path(named)}: is a link to {shown_path(real)}, outside its folder "
                            f"{shown_path(named.parent)}; a corpus is read only inside the folders it is named "
                            "through: name the folder it points to")


def _cache_root(folder: Path) -> Path:
    """The folder a corpus file of ``folder`` may point into: the folder, or a Hugging Face cache
    repository (``datasets--ORG--NAME``) for one of its snapshots, whose files link into its blobs."""
    folder = folder.absolute()
    for up in (folder, *folder.parents):
        if up.parent.name == "snapshots" and up.parent.parent.name.startswith("datasets--"):
            return up.parent.parent
    return folder


def folder_files(folder: Path, split: bool = False) -> list[Path]:
    """A ``datasets`` folder's Arrow files in its own order, or the Parquet files under a folder
    (``split``: a split's folder of a saved DatasetDict, which holds one dataset, not another dict)."""
    if (folder / "dataset_dict.json").is_file() and not split:
        where = folder / "dataset_dict.json"
        splits = _json_file(_inside(where, folder)).get("splits")
        if not isinstance(splits, list) or not all(isinstance(s, str) for s in splits):
            raise BadCorpus(f"{shown_path(where)}: no list of 'splits'; save the dataset again with save_to_disk")
        for name in splits:  # (a split is a folder of its own beside the file: nothing outside, nothing twice)
            if name in ("", ".", "..") or Path(name).name != name or not (folder / name / "state.json").is_file():
                raise BadCorpus(f"{shown_path(where)}: split {shown_path(name)!r} is not a saved dataset in this "
                                "folder; save the dataset again with save_to_disk")
        return [f for name in splits for f in folder_files(folder / name, split=True)]
    if (folder / "state.json").is_file():
        where = folder / "state.json"
        files = _json_file(_inside(where, folder)).get("_data_files")  # (a link out of it: refused, as a corpus file)
        if not isinstance(files, list) or not all(isinstance(f, dict) and isinstance(f.get("filename"), str)
                                                  for f in files):
            raise BadCorpus(f"{shown_path(where)}: no list of '_data_files'; save the dataset again with save_to_disk")
        named = [folder / Path(f["filename"]).name for f in files]  # (a name only: nothing outside the folder)
        for path, f in zip(named, files):
            if not path.is_file():
                raise BadCorpus(f"{shown_path(where)}: names {shown_path(f['filename'])!r}, which is not a file in "
                                "the dataset's folder; save the dataset again with save_to_disk")
        return named
    found = sorted(folder.rglob("*.parquet"))
    if not found:
        raise BadCorpus(f"{shown_path(folder)}: is a folder with no .parquet files and no saved dataset (state.json); "
                        "-c takes a corpus name, a file, a folder of Parquet files, a saved dataset or a glob")
    return found


def _json_file(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise BadCorpus(f"{shown_path(path)}: cannot read the dataset's description ({type(e).__name__}: "
                        f"{str(e)[:120]}); save it again with save_to_disk") from None
    if not isinstance(data, dict):
        raise BadCorpus(f"{shown_path(path)}: not a JSON object; save the dataset again with save_to_disk")
    return data


def corpus_name(path: Path) -> str:
    """``edge.jsonl.zst`` -> ``edge``: the name a file's cases carry."""
    name = path.name
    for suffix in COMPRESSED_SUFFIXES + (".jsonl", ".json", ".txt", ".parquet", ".arrow"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[:-len(suffix)]
    return shown_path(name)


# -- what kind of file -------------------------------------------------------------------------

def file_kind(path: Path) -> str:
    """``parquet``, ``arrow-file``, ``arrow-stream``, ``gzip``, ``zstd`` or ``plain``, from the first bytes."""
    with open_corpus(path, decompress=False) as fh:
        try:
            head = fh.read(8)
        except OSError as e:
            raise BadCorpus(f"{shown_path(path)}: cannot read the corpus file ({e.strerror or e})") from None
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if head.startswith(ARROW_FILE_MAGIC):
        return "arrow-file"
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    if path.suffix == ".arrow":
        return "arrow-stream"
    return "plain"


def open_corpus(path: Path, what: str = "corpus", decompress: bool = True) -> BinaryIO:
    """The file's bytes; a gzip or zstd file's decompressed bytes (unless ``decompress`` is False)."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise BadCorpus(f"{shown_path(path)}: no such {what} file") from None
    except IsADirectoryError:
        raise BadCorpus(f"{shown_path(path)}: is a folder, not a {what} file; name a .jsonl or .txt file") from None
    except PermissionError:
        raise BadCorpus(f"{shown_path(path)}: permission denied; make the {what} file readable "
                        f"(chmod u+r) or copy it somewhere readable") from None
    except OSError as e:
        raise BadCorpus(f"{shown_path(path)}: cannot open the {what} file ({e.strerror or e})") from None
    if not decompress:
        return fh
    try:
        kind = file_kind(path)
        if kind == "gzip":
            unpacked = gzip.GzipFile(fileobj=fh, mode="rb")
            unpacked.myfileobj = fh  # type: ignore[assignment]  # closed with it, as when GzipFile opens a file
            return unpacked  # type: ignore[return-value]
        if kind == "zstd":
            return io.BufferedReader(_ZstdReader(fh, path), 1 << 16)
    except BaseException:
        fh.close()
        raise
    return fh


class _ZstdReader(io.RawIOBase):
    """A zstd file's decompressed bytes, frame after frame. Unlike zstandard's ``stream_reader``,
    a file that ends in the middle of a frame (a cut download) is an error, not a shorter corpus.
    Input goes in small chunks, so one read expands to a bounded amount."""

    CHUNK = 1 << 14

    def __init__(self, fh: BinaryIO, path: Path):
        try:
            import zstandard
        except ImportError:
            raise BadCorpus(f"{shown_path(path)}: a zstd-compressed file; reading it needs zstandard: "
                            "pip install 'tokparity[data]'") from None
        self._zstd, self._fh = zstandard, fh
        # What is decompressed and not yet read, read from ``_at`` on: a small chunk of a highly
        # compressed file expands to hundreds of MB, which must not be copied again on every read.
        self._out, self._at = b"", 0
        self._frame: Any = None  # the frame being decompressed

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        while self._at == len(self._out):
            data = self._fh.read(self.CHUNK)
            if not data:
                if self._frame is not None and not self._frame.eof:
                    raise EOFError("the zstd data ends in the middle of a frame")
                return 0
            self._out, self._at = self._decompressed(data), 0
        n = min(len(buffer), len(self._out) - self._at)
        buffer[:n] = memoryview(self._out)[self._at:self._at + n]
        self._at += n
        return n

    def _decompressed(self, data: bytes) -> bytes:
        parts = []
        while data:
            if self._frame is None or self._frame.eof:
                self._frame = self._zstd.ZstdDecompressor().decompressobj()
            parts.append(self._frame.decompress(data))
            data = self._frame.unused_data if self._frame.eof else b""
        return b"".join(parts)

    def close(self) -> None:
        self._fh.close()
        super().close()


def is_text_lines(path: Path) -> bool:
    """A text file (one case a line) rather than JSONL: ``.txt``, also under ``.gz`` / ``.zst``."""
    name = path.name
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    return name.endswith(".txt")


def fingerprint(path: Path) -> str:
    """What a journal keeps of a big corpus file so that a resume can tell it changed, without
    reading it again: its size, its modification time and a sha256 of its first and last MiB
    (where a Parquet footer, a gzip trailer's CRC or an appended line would show). A full sha256
    would read a 100 GB corpus once more before anything runs."""
    st = path.stat()
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read(1 << 20))
        if st.st_size > 1 << 20:
            fh.seek(max(1 << 20, st.st_size - (1 << 20)))
            h.update(fh.read(1 << 20))
    return f"size={st.st_size} mtime_ns={st.st_mtime_ns} head-tail-sha256={h.hexdigest()}"


# -- a sample of the cases ---------------------------------------------------------------------

def sampled(cases: Iterable, options: ReadOptions) -> Iterator:
    """The cases ``options`` keep, in corpus order. The same seed keeps the same cases (a resume
    chooses them again). ``--sample N`` holds N cases while it reads to the end."""
    if options.fraction is not None:
        rng = random.Random(options.seed)
        yield from (case for case in cases if rng.random() < options.fraction)
    elif options.sample is not None:
        yield from _reservoir(cases, options.sample, random.Random(options.seed))
    else:
        yield from cases


def _reservoir(cases: Iterable, k: int, rng: random.Random) -> Iterator:
    """Algorithm R: after case i (from 0), each case seen so far is kept with probability k/(i+1)."""
    kept: list = []
    for i, case in enumerate(cases):
        if i < k:
            kept.append((i, case))
        else:
            j = rng.randrange(i + 1)
            if j < k:
                kept[j] = (i, case)
    yield from (case for _, case in sorted(kept, key=lambda pair: pair[0]))
