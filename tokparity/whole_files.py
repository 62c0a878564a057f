"""Files written whole: under a temporary name beside the target, then renamed onto it.

A rename is atomic, so a kill or a full disk leaves the earlier file or the new one, never a cut
one. The temporary name is made fresh (``O_CREAT | O_EXCL``, a random part): a link planted
beside the target under a name it could guess is never written through. The folder may come
from a pull request, and such a link may point at a corpus or at the key that signs journals."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def write_whole(path: Path, write: Callable[[Path], T], suffix: str = ".tmp") -> T:
    """``write(temporary)`` (it may open the name again, or hand it to a library), then rename it
    to ``path``. The temporary file is removed on any failure; an OSError names ``path``."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    temporary = Path(name)
    try:
        result = write(temporary)
        os.replace(temporary, path)
        return result
    except BaseException as e:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise OSError(e.errno, e.strerror, str(path)) from None
        raise


def write_text_whole(path: Path, text: str) -> None:
    write_whole(path, lambda temporary: temporary.write_text(text, "utf-8"))
