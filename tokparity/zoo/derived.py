"""Derived zoo files: a pinned file converted by tokparity into another format, built after fetch.

``models.toml`` declares them per model (``derived = { spm_model = "from gguf" }``), so that a
third implementation can meet the others on one vocabulary: SentencePiece on llama-spm's GGUF
made into a ``.model``, llama.cpp on botchan's ``.model`` made into a GGUF, and so on. They are
not originals and are never treated as such:

- they are not pinned by sha256 (their bytes are tokparity's, not a registry's); they live in the
  cache under ``derived/<model>/<role>-<key>/``, where ``key`` hashes the source file's pinned
  sha256 (or, for a file derived from a derived or trained file, that file's key) and the converter version
  (tokparity's version, a hash of the converter sources and the version of the library each
  direction writes with), so a changed converter builds a new file instead of reusing a stale one;
- beside each file, ``derived.json`` records where it came from and every field the conversion
  could not carry (the converters' warnings): ``tokparity zoo list`` and ``inspect`` show them;
- ``compare`` still takes its oracle from the pinned files (``ModelFiles.original_files``).

A derived file that cannot be built (a converter's error, a missing optional library) is not an
error for the model: it is reported in ``ModelFiles.missing`` with the reason and the run goes on
with the pinned files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata, resources
from pathlib import Path

from tokparity import __version__
from tokparity.errors import TokparityError
from tokparity.textview import shown_path
from tokparity.zoo.fetch import cache_dir, cached_path, file_lock, is_cached, publish_folder
from tokparity.zoo.manifest import ZooModel

# The converter target of each role, and the library whose version is part of that converter.
TARGET_OF_ROLE = {"gguf": "gguf", "spm_model": "spm", "tokenizer_json": "hf"}
LIBRARY_OF_TARGET = {"gguf": "gguf", "spm": "protobuf", "hf": "transformers"}
FILENAME = {"gguf": "{model}.gguf", "spm_model": "tokenizer.model", "tokenizer_json": "tokenizer.json"}
SIDECAR = "derived.json"


@dataclass(frozen=True)
class Derivation:
    """How one derived file was made, and what it lost."""

    role: str
    from_role: str
    key: str
    converter: str
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        lost = f"; {len(self.warnings)} fields not carried" if self.warnings else ""
        return f"derived from {self.from_role} by tokparity convert {self.converter}{lost}"


@lru_cache(maxsize=1)
def _converter_sources_digest() -> str:
    h = hashlib.sha256()
    package = resources.files("tokparity.convert")
    for name in sorted(p.name for p in package.iterdir() if p.name.endswith(".py")):
        h.update(name.encode() + b"\0" + package.joinpath(name).read_bytes())
    return h.hexdigest()[:12]


def converter_version(role: str) -> str:
    """``"0.1.0+3fa2c1d0e9b7/gguf-0.19.0"``: tokparity's version, its converter sources, the library."""
    library = LIBRARY_OF_TARGET[TARGET_OF_ROLE[role]]
    try:
        lib = f"{library}-{metadata.version(library)}"
    except metadata.PackageNotFoundError:
        lib = f"{library}-none"
    return f"{__version__}+{_converter_sources_digest()}/{lib}"


def _key(source_id: str, role: str, converter: str) -> str:
    return hashlib.sha256(f"{source_id}\0{role}\0{converter}".encode()).hexdigest()[:16]


def derived_root() -> Path:
    return cache_dir() / "derived"


def _folder(model: str, role: str, key: str) -> Path:
    return derived_root() / model / f"{role}-{key}"


def _lock() -> contextlib.AbstractContextManager[None]:
    return file_lock(derived_root() / ".build.lock")


def _read(folder: Path, model: str, role: str) -> tuple[Path, Derivation] | None:
    path, sidecar = folder / FILENAME[role].format(model=model), folder / SIDECAR
    if not (path.is_file() and sidecar.is_file()):
        return None
    try:
        d = json.loads(sidecar.read_text("utf-8"))
        return path, Derivation(role, d["from_role"], d["key"], d["converter"], tuple(d["warnings"]))
    except (ValueError, KeyError, TypeError):  # a damaged sidecar: the file is rebuilt
        return None


def _build(model: str, role: str, from_role: str, source: Path, source_id: str, key: str, converter: str,
           folder: Path) -> tuple[Path, Derivation]:
    from tokparity.convert import convert

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{role}-", dir=folder.parent))
    try:
        out = tmp / FILENAME[role].format(model=model)
        started = time.perf_counter()
        result = convert(source, TARGET_OF_ROLE[role], out)
        warnings = tuple(str(w) for w in result.warnings)
        publish_folder(tmp, folder, tmp / SIDECAR, {
            "model": model, "role": role, "from_role": from_role, "source": str(source), "source_id": source_id,
            "key": key, "converter": converter, "warnings": list(warnings),
            "seconds": round(time.perf_counter() - started, 2), "bytes": out.stat().st_size,
        })
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder / out.name, Derivation(role, from_role, key, converter, warnings)


def derived_files(model: ZooModel, build: bool = True,
                  log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr)
                  ) -> tuple[dict[str, Path], dict[str, Derivation], dict[str, str]]:
    """The derived files of a zoo model: ``(files, derivations, missing)``, each keyed by role.

    With ``build`` a file not in the cache is made now (the pinned files must be fetched);
    without, only what is cached is returned and the rest is listed in ``missing``."""
    files: dict[str, Path] = {}
    derivations: dict[str, Derivation] = {}
    missing: dict[str, str] = {}
    for role, from_role in model.derived.items():
        if from_role in model.files:
            pinned = model.files[from_role]
            source, source_id = (cached_path(pinned) if is_cached(pinned) else None), pinned.sha256
        elif model.trained is not None and from_role == "spm_model":  # the model tokparity trains
            from tokparity.zoo.trained import trained_file
            source, training, _ = trained_file(model, build=build, log=log)
            source_id = "trained:" + (training.key if training else "?")
        else:
            source, source_id = files.get(from_role), "derived:" + (derivations[from_role].key
                                                                    if from_role in derivations else "?")
        converter = converter_version(role)
        key = _key(source_id, role, converter)
        folder = _folder(model.name, role, key)
        found = _read(folder, model.name, role)
        if found is None and build and source is not None:
            with _lock():
                found = _read(folder, model.name, role)  # another process may have built it meanwhile
                if found is None:
                    try:
                        found = _build(model.name, role, from_role, source, source_id, key, converter, folder)
                    except TokparityError as e:
                        missing[role] = f"derived from {from_role}, could not be built: {e}"
                        log(f"warning: {model.name}: {missing[role]}")
                        continue
                    # (one short line on a first run: the fields themselves are inspect's to list)
                    lost = f"; {len(found[1].warnings)} notes on fields not carried (tokparity inspect {model.name} lists " \
                        "them)" if found[1].warnings else ""
                    log(f"built {model.name} {role} from {from_role} in {shown_path(found[0].parent)}{lost}")
        if found is None:
            if role not in missing:
                missing[role] = (f"derived from {from_role}, not built yet (tokparity zoo fetch {model.name})"
                                 if source is not None or not build else
                                 f"derived from {from_role}, which is not available")
            continue
        files[role], derivations[role] = found
    return files, derivations, missing
