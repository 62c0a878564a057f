"""Files written whole: under a temporary name beside the target, then renamed onto it.

A rename is atomic, so a kill or a full disk leaves the earlier file or the new one, never a cut
one. The temporary name is made fresh (``O_CREAT | O_EXCL``, a random part): a link planted
beside the target under a name it could guess is never written through. The folder may come
from a pull request, and such a link may point at a corpus or at the key that signs journals.
The file is written through the descriptor that made it, not by its name again, so a link put in
its place meanwhile is not written through either. Files appended to are opened with
``O_NOFOLLOW`` (``open_unfollowed``)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

T = TypeVar("T")


def write_whole(path: Path, write: Callable[[Path], T], suffix: str = ".tmp") -> T:
    """``write(file)`` (it may open the path it is given, or hand it to a library), then rename the
    temporary file to ``path``. On Linux ``write`` is given ``/proc/self/fd/N``: that opens the
    file made, whatever its name holds by then. The file gets the old one's mode, or a new file's
    (mkstemp's own is 0600). The temporary file is removed on any failure; an OSError names ``path``."""
    temporary: Path | None = None
    fd = -1
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
        temporary = Path(name)
        os.fchmod(fd, _mode_for(path))
        made = Path(f"/proc/self/fd/{fd}")
        result = write(made if os.path.exists(made) else temporary)  # (False for any error: no /proc, no access)
        mine, there = os.fstat(fd), os.lstat(temporary)
        if (mine.st_dev, mine.st_ino) != (there.st_dev, there.st_ino):
            temporary = None  # (not ours to remove)
            raise OSError(errno.EEXIST, f"its temporary file {name} was replaced while it was written")
        os.replace(temporary, path)
        return result
    except BaseException as e:
        if temporary is not None:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise OSError(e.errno, e.strerror, str(path)) from None
        raise
    finally:
        if fd >= 0:
            os.close(fd)


def open_unfollowed(path: str | os.PathLike, mode: str, encoding: str | None = None) -> IO:
    """``open(path, mode)`` for appending (``a``, ``ab``) or updating (``r+``), refusing a
    symbolic link at ``path`` (ELOOP): a link planted there is not written through."""
    flags = {"a": os.O_WRONLY | os.O_APPEND | os.O_CREAT, "r+": os.O_RDWR}[mode.replace("b", "")]
    fd = os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666)
    return os.fdopen(fd, mode, encoding=encoding)


def write_text_whole(path: Path, text: str) -> None:
    write_whole(path, lambda temporary: temporary.write_text(text, "utf-8"))


def _mode_for(path: Path) -> int:
    """The mode ``path`` has, or the one a file made now gets (0666 less the umask)."""
    try:
        return stat.S_IMODE(os.lstat(path).st_mode) if path.is_file() and not path.is_symlink() else _new_mode()
    except OSError:
        return _new_mode()


def _new_mode() -> int:
    try:  # (Linux says it without changing it: os.umask would, for a moment, for every thread)
        with open("/proc/self/status", encoding="ascii") as f:
            umask = next(int(line.split()[1], 8) for line in f if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0o022)
        os.umask(umask)
    return 0o666 & ~umask
