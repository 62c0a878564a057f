"""What ``--resume DIR`` takes from a journal: the command's arguments, stored in the header so
that a resume needs none (``stored_args``, ``take_args``), the corpora's fingerprints (a resume
on a changed corpus would mix two runs) and the positions already done (``DoneSet``)."""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from tokparity.errors import TokparityError

if TYPE_CHECKING:
    from tokparity.records import CaseRecord


def corpus_fingerprints(corpora: list[str]) -> dict[str, str]:
    """A fingerprint of each corpus file (named corpora included), keyed by its absolute path
    (a resume may start in another folder): a resume checks them. A JSONL or text file: its
    sha256. A Parquet, Arrow or compressed file, which may be many GB: its size, modification
    time and a digest of its ends (``pipeline.fingerprint``), not a second reading. A folder or a
    glob: also the list of its files, so that a file added or removed is seen."""
    from tokparity.corpus import COMMITTED, corpora_dir
    from tokparity.corpus.pipeline import corpus_files, file_kind, fingerprint, split_options

    prints = {}
    for spec in corpora:
        spec, _ = split_options(spec)
        if spec == "all" or spec in COMMITTED:
            for name in COMMITTED if spec == "all" else (spec,):
                prints[name] = _sha256(corpora_dir() / f"{name}.jsonl")
            continue
        if spec == "llama.cpp-tests" or (not Path(spec).exists() and not glob.has_magic(spec)):
            continue  # (an unknown name: the run says so, naming it)
        files = [path for path, _ in corpus_files(spec)]
        if len(files) != 1 or not Path(spec).is_file():
            listing = "\n".join(f"{path.resolve()} {path.stat().st_size}" for path in files)
            prints[str(Path(spec).absolute())] = "files-sha256=" + hashlib.sha256(listing.encode()).hexdigest()
        for path in files:
            kind = file_kind(path)
            prints[str(path.resolve())] = _sha256(path) if kind == "plain" else fingerprint(path)
    return prints


# A model file up to this size is read whole for its sha256; a larger one (a GGUF with weights) is
# fingerprinted as a big corpus file is (``pipeline.fingerprint``).
WHOLE_MODEL_FILE = 64 << 20


def model_fingerprints(models: list[str]) -> dict[str, dict[str, str]]:
    """For each local model, a fingerprint of every file a run reads for it (``files_read_with``),
    keyed by the model argument, then the file's absolute path: a resume after an edited template
    would judge some conversations by the old one and some by the new. Zoo models are pinned by
    their digests already, and ``hf:`` models are the Hub's."""
    from tokparity.corpus.pipeline import fingerprint
    from tokparity.zoo import load_manifest, named_path
    from tokparity.zoo.fetch import sha256_of
    from tokparity.zoo.model_file import files_read_with

    zoo = load_manifest().models
    prints: dict[str, dict[str, str]] = {}
    for spec in models:  # (in resolve_model's order: the Hub, the zoo, a path, NAME=PATH)
        if spec.startswith("hf:") or spec in zoo:
            continue
        path = Path(os.path.expanduser(spec))
        if not path.exists():
            named = named_path(spec)
            if named is None:
                continue
            path = named[1]
        prints[spec] = {str(file.absolute()): sha256_of(file) if file.stat().st_size <= WHOLE_MODEL_FILE
                        else fingerprint(file)
                        for file in files_read_with(path)}
    return prints


def _sha256(path: Path) -> str:
    from tokparity.corpus import open_corpus

    h = hashlib.sha256()
    with open_corpus(path) as f:  # (an unreadable corpus: one line, not a traceback)
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class DoneSet:
    """Positions of finished cases, small even for millions: everything below ``prefix`` is done,
    plus the few out of order above it."""

    def __init__(self) -> None:
        self.prefix = 0
        self.extra: set[int] = set()

    def add(self, n: int) -> None:
        if n < self.prefix:
            return
        self.extra.add(n)
        while self.prefix in self.extra:
            self.extra.discard(self.prefix)
            self.prefix += 1

    def __contains__(self, n: int) -> bool:
        return n < self.prefix or n in self.extra

    def __len__(self) -> int:
        return self.prefix + len(self.extra)


def _absolute(spec: object) -> object:
    """A path argument as an absolute path (a resume may start elsewhere); names stay names. A bare
    name that is a file or folder here (``mdl``) and no built-in name is a path too."""
    if not isinstance(spec, str):
        return spec
    path = Path(spec)
    if glob.has_magic(spec) and "/" in spec:  # a glob tokparity expands (-c 'data/*.parquet')
        return os.path.abspath(os.path.expanduser(spec))
    return str(path.resolve()) if ("/" in spec or path.suffix or not _built_in(spec)) and path.exists() else spec


def _built_in(name: str) -> bool:
    """Whether ``name`` is a zoo model's or a built-in corpus's: the run takes it as that, not as a path."""
    from tokparity.corpus.base import NAMES
    from tokparity.zoo.manifest import load_manifest

    return name in NAMES or name == "all" or name in load_manifest().models


def stored_args(args: object, keys: tuple[str, ...], paths: tuple[str, ...] = ()) -> dict:
    """The arguments ``keys`` of an argparse namespace, those in ``paths`` made absolute."""
    stored = {}
    for key in keys:
        value = getattr(args, key)
        if key in paths:
            value = [_absolute(v) for v in value] if isinstance(value, list) else _absolute(value)
        stored[key] = value
    return stored


def take_args(args: argparse.Namespace, header: dict, folder: str, command: str, paths: tuple[str, ...] = (),
              keys: tuple[str, ...] | None = None) -> None:
    """Give ``args`` the interrupted run's arguments (only ``keys``, those a journal stores: a
    header cannot set any other); one the user gives again must be the same."""
    if getattr(args, "out", None) and Path(args.out).resolve() != Path(folder).resolve():
        raise TokparityError(f"--resume {folder} writes its reports there; drop -o {args.out}")
    for key, value in header.get("args", {}).items():
        if keys is not None and key not in keys:
            continue
        given = getattr(args, key, None)
        if given not in (None, [], False) and given != value and stored_args(args, (key,), paths)[key] != value:
            raise TokparityError(f"--resume {folder}: the {command} run was started with {key}={value!r}, not "
                                 f"{given!r}; resume without it, or start a new run in another folder")
        setattr(args, key, value)
    args.out = folder
    args.engine_folder = header.get("cwd")  # (its engines run where it began: their relative paths point there)


def whole_cases(records: Iterable[CaseRecord], ops: tuple[str, ...]) -> Iterator[list[CaseRecord]]:
    """A journal's records a case at a time (a case's records, one per op, are written together and
    in case order), only the cases whose every op is there: the last case of a run killed in the
    middle of a write may lack some, and is run again whole."""
    group: list[CaseRecord] = []
    for record in records:
        if group and record.n != group[0].n:
            if _whole(group, ops):
                yield group
            group = []
        group.append(record)
    if group and _whole(group, ops):
        yield group


def _whole(group: list[CaseRecord], ops: tuple[str, ...]) -> bool:
    if any(r.too_long for r in group):
        return True
    needed = set(ops) - ({"encode"} if group[0].corpus == "ids" else set())  # (id sequences are not encoded)
    return needed <= {r.op for r in group}
