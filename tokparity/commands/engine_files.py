"""The files an engine of ``-b`` runs from, read off its spec as a shell and Python would find
them: a ``py:`` engine's module and its package, a ``cmd:`` engine's program and the files its
command names. No output of a run may be one of them (tokparity.commands.compare)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
from pathlib import Path


def engine_files(backends: list[str] | None, began_in: str | None = None) -> list[str]:
    """The files an engine of ``-b`` runs from: a ``py:`` engine's module and the modules beside it,
    a ``cmd:`` engine's program and the files its command names. The run reads them, so no output
    may be one. ``began_in``: the folder a resumed run's engines start in (their relative words
    name files there); the files are then given whole."""
    if began_in is not None and os.path.isdir(began_in):
        with contextlib.chdir(began_in):
            return [os.path.abspath(os.path.expanduser(f)) for f in engine_files(backends)]
    from tokparity.backends.registry import split_label
    from tokparity.errors import TokparityError

    files: list[str] = []
    for spec in backends or []:
        try:
            body = split_label(spec)[1].strip()
        except TokparityError:
            body = spec
        if body.startswith("py:"):
            target = body[3:].rsplit(":", 1)[0]
            words = [target, *_module_files(target)]  # (a path, or a module found on the path or from here)
        elif body.startswith("cmd:"):
            words = _command_words(body[4:])
        else:
            continue
        files += [w for w in words if not w.startswith("{") and Path(os.path.expanduser(w)).is_file()]
        files += [str(f) for w in dict.fromkeys(words) if not w.startswith("{") and _engines_folder(w)
                  for f in _python_files(Path(os.path.expanduser(w)), recursive=True, pattern="*")]
    return files


def _engines_folder(word: str) -> bool:
    """Whether ``word`` names a folder whose every file is the engine's: one its script enters
    (``cd``, ``pushd``: written with a trailing separator here), or any folder named inside the
    current folder. The current folder and those above it hold the reports too: their files are
    the engine's only where a word names them."""
    path = Path(os.path.expanduser(word))
    if not path.is_dir():
        return False
    try:
        folder, here = Path(os.path.realpath(path)), Path(os.path.realpath(os.getcwd()))
    except (OSError, ValueError):
        return False
    if here.is_relative_to(folder):
        return False
    return word.endswith(os.sep) or folder.is_relative_to(here)


def _command_words(command: str, depth: int = 0, positional: tuple[str, ...] = ()) -> list[str]:
    """Every word of a ``cmd:`` command that may name a file: each word, the value of ``--data=FILE``,
    of ``KEY=FILE`` and of a short option glued to it (``-dFILE``), the files of a module run with
    ``-m``, the program found on ``$PATH``, and the same inside a word that is a command of its own
    (``sh -c "cd x && python3 engine.py;" sh ARG``, read as a shell splits it, ``$1`` its ``ARG``)."""
    import shlex

    if depth:  # (``$(pwd)`` and a backquoted ``pwd`` are the current folder; no other command's output is guessed)
        command = re.sub(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`", lambda m: os.getcwd(), command)
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True) if depth else None
        if lexer is not None:
            lexer.whitespace_split = True  # (a word is cut at spaces and the shell's operators only: tok+v2.json stays one)
        words = [w for w in lexer if w not in ("&&", "||", ";", "|", "&", "(", ")")] if lexer else shlex.split(command)
    except ValueError:  # (an unclosed quote: the backend itself says so)
        return []
    if depth:  # (a shell script's words, as its shell expands them; cmd: itself runs no shell)
        words = _variables_expanded(words, positional)
    found = list(words)
    for k, w in enumerate(words):
        if _changes_folder(words[:k]):  # (after `cd DIR`, `cd -P DIR` or `pushd DIR`, a word names a file in DIR too)
            found += [os.path.join(w, ""), *(os.path.join(w, later) for later in words[k + 1:])]
        value = w.split("=", 1)[1] if "=" in w else w[2:] if w.startswith("-") and not w.startswith("--") else w
        found.append(value)
        # (a list of files in one value, --files=a,b or a:b; a file:// URI; an @file of arguments)
        found += [part for part in re.split(r"[,:;]", value.removeprefix("file://")) if part]
        if value.startswith("@") and depth < 3 and Path(value[1:]).is_file():
            found.append(value[1:])
            try:
                found += _command_words(Path(value[1:]).read_text("utf-8", errors="replace")[:65536], depth + 1)
            except OSError:
                pass
        if w == "-m" and k + 1 < len(words) or w.startswith("-m") and len(w) > 2 and "=" not in w:
            found += _module_files(words[k + 1] if w == "-m" else w[2:])
        if depth < 3 and any(ch.isspace() for ch in w):  # (the words after a script are its $0, $1…)
            found += _command_words(w, depth + 1, tuple(words[k + 1:]))
    found += [program for program in map(shutil.which, words[:1]) if program]
    return found


def _changes_folder(before: list[str]) -> bool:
    """Whether the word after ``before`` is the folder of a ``cd`` or ``pushd``, past its options."""
    k = len(before) - 1
    while k >= 0 and before[k].startswith("-") and before[k] != "-":
        k -= 1
    return k >= 0 and before[k] in ("cd", "pushd")


def _variables_expanded(words: list[str], positional: tuple[str, ...] = ()) -> list[str]:
    """The words with each ``$NAME`` and ``${NAME}`` a shell would expand: a variable the command
    sets before (``D=/x; python3 $D/e.py``), else tokparity's environment (``$HOME``, ``$PWD``), and
    ``$0`` to ``$9`` the words after the script. A variable none holds stays as it is: it names no
    file here."""
    known = dict(os.environ) | {"PWD": os.getcwd(), "HOME": os.path.expanduser("~")} | \
        {str(n): word for n, word in enumerate(positional[:10])}
    out = []
    for w in words:
        w = re.sub(r"\$(?:\{([A-Za-z_]\w*|\d)\}|([A-Za-z_]\w*|\d))",
                   lambda m: known.get(m.group(1) or m.group(2), m.group(0)), w)
        assignment = re.fullmatch(r"([A-Za-z_]\w*)=(.*)", w)
        if assignment:
            known[assignment.group(1)] = assignment.group(2)
        out.append(w)
    return out


def _module_files(target: str) -> list[str]:
    """The files a ``py:`` module ``a.b`` may be read from, from here and from every folder of the
    path (``$PYTHONPATH`` included): ``a/b.py``, the packages' ``__init__.py``, and every module of
    the package the engine is in, which it may import. A module given as a path: the modules beside it,
    and where it is in a package, every file of the package (its modules and the data files it reads)."""
    if target.endswith(".py") or os.sep in target:
        folder = Path(os.path.expanduser(target)).parent
        if not (folder / "__init__.py").is_file():
            return [str(f) for f in _python_files(folder, recursive=False)]
        while (folder.parent / "__init__.py").is_file() and folder.parent != folder:
            folder = folder.parent
        return [str(f) for f in _python_files(folder, recursive=True, pattern="*")]
    parts = target.split(".")
    names = [os.path.join(*parts) + ".py", os.path.join(*parts, "__init__.py")]
    names += [os.path.join(*parts[:k], "__init__.py") for k in range(1, len(parts))]
    folders = list(dict.fromkeys(os.path.abspath(f or ".") for f in
                                 ["", *os.environ.get("PYTHONPATH", "").split(os.pathsep), *sys.path]))
    files = [os.path.join(where, name) for where in folders for name in names]
    for where in folders:  # (the package it is in, or the modules beside a module of its own)
        if (Path(where, parts[0]) / "__init__.py").is_file():  # (its modules and the data files it reads)
            files += [str(f) for f in _python_files(Path(where, parts[0]), recursive=True, pattern="*")]
        elif len(parts) == 1 and Path(where, parts[0] + ".py").is_file():
            files += [str(f) for f in _python_files(Path(where), recursive=False)]
    return files


def _python_files(folder: Path, recursive: bool, most: int = 10_000, pattern: str = "*.py") -> list[Path]:
    """The ``.py`` files of ``folder`` (and of its subfolders), at most ``most`` of them; with
    ``pattern`` "*", every file."""
    try:
        found = folder.rglob(pattern) if recursive else folder.glob(pattern)
        return [f for _, f in zip(range(most), (f for f in found if f.is_file()))]
    except OSError:
        return []
