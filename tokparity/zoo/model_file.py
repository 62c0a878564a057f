"""A file of a model's folder, read as the folder's own: a regular file inside it, bounded first.

A model folder is often a repository someone else made (a clone, a pull request). A link in it
that points out of it (``chat_template.jinja`` → ``/proc/self/environ``) would put that file's
text into the prompts, and so into every report. So a file tokparity reads from a model folder
must resolve to a regular file inside that folder. A Hugging Face cache snapshot is the one
exception its layout needs: its files are links into the repository's ``blobs`` folder beside.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tokparity.errors import TokparityError
from tokparity.textview import shown_path

# The files of a model folder that a run, or a tokenizer library it runs, may read: tokenizer.json,
# tokenizer_config.json, chat_template.jinja, special_tokens_map.json, tokenizer.model, vocab.txt, a
# GGUF and its test texts. A report a user keeps there (junit.xml, summary.md) is none of them.
MODEL_FILE_SUFFIXES = (".json", ".jinja", ".model", ".gguf", ".txt", ".tiktoken", ".inp", ".out", ".vocab")
# Beside a model named as one file, the files read with it (where the folder has them).
READ_BESIDE = ("tokenizer_config.json", "chat_template.jinja")
# Beside a transformers file, the configuration that tokparity check reads (checks/ends.py, sizes.py).
CONFIGURATION = ("generation_config.json", "config.json")


def _root(folder: Path) -> Path:
    """The folder a file of ``folder`` may point into: the folder, or a Hugging Face cache
    repository (``models--ORG--NAME``) for one of its snapshots."""
    folder = folder.absolute()
    if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
        return folder.parent.parent
    return folder


def checked_model_file(path: Path, folder: Path) -> Path:
    """``path``, a file of the model folder ``folder``, once it is a regular file inside it;
    else one line naming it and what to do."""
    try:
        real = Path(os.path.realpath(path))
        root = Path(os.path.realpath(_root(folder)))
        found = os.stat(real)
    except (OSError, RuntimeError, ValueError) as e:
        raise TokparityError(f"{shown_path(path)}: cannot read this model file ({e}); fix or remove it") from None
    if not real.is_relative_to(root):
        raise _link_out(path, real, folder)
    if not stat.S_ISREG(found.st_mode):
        raise TokparityError(f"{shown_path(path)}: not a regular file; a model file must be one")
    if found.st_nlink > 1:  # (its other name may be anywhere: a hard link to a secret reads as the secret)
        raise TokparityError(f"{shown_path(path)}: is a hard link ({found.st_nlink} names for one file), and its other "
                             "names may lie outside the model folder; copy it to a file of its own")
    return path


def read_model_text(path: Path, folder: Path, max_bytes: int, what: str) -> str:
    """The UTF-8 text of ``path``, a file of the model folder ``folder`` (``checked_model_file``),
    refused before it is read when it is larger than ``max_bytes``. ``what``: what the file is,
    as the message says it ("the chat template")."""
    checked_model_file(path, folder)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as e:
        raise TokparityError(f"{shown_path(path)}: cannot read {what} ({e.strerror or e}); fix the file") from None
    if len(data) > max_bytes:
        raise TokparityError(f"{shown_path(path)}: {what} is larger than {max_bytes:,} bytes; a file that large "
                             "is refused (a damaged or hostile file)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokparityError(f"{shown_path(path)}: {what} is not UTF-8 (invalid byte at offset {e.start}); "
                             "save it as UTF-8") from None


def read_model_json(path: Path, folder: Path, max_bytes: int, what: str) -> dict:
    """The JSON object in ``path``, a file of the model folder ``folder`` (``read_model_text``);
    one line naming the file where it is not JSON or not an object."""
    import json

    text = read_model_text(path, folder, max_bytes, what)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise TokparityError(f"{shown_path(path)}: cannot read it as JSON ({e}); fix the file") from None
    if not isinstance(data, dict):
        raise TokparityError(f"{shown_path(path)}: not a JSON object; fix the file")
    return data


def refuse_links_out(folder: Path) -> None:
    """Refuse a model folder in which a link points out of it, or a model file is a hard link: at
    its top, or in ``additional_chat_templates/``, where tokenizer libraries read files of their own
    choosing (transformers reads ``special_tokens_map.json``, ``vocab.txt`` and others by name)."""
    root = Path(os.path.realpath(_root(folder)))
    for where in (folder, folder / "additional_chat_templates"):
        try:
            entries = list(where.iterdir()) if where == folder or where.is_dir() else []
        except OSError as e:
            raise TokparityError(f"{shown_path(where)}: cannot list this model folder ({e.strerror or e})") from None
        for entry in entries:
            if entry.is_symlink() and not (real := Path(os.path.realpath(entry))).is_relative_to(root):
                raise _link_out(entry, real, folder)
            # (a hard link too, or a link to one: transformers reads special_tokens_map.json or
            # added_tokens.json by name)
            if entry.suffix in MODEL_FILE_SUFFIXES and entry.is_file():
                checked_model_file(entry, folder)


def _link_out(path: Path, real: Path, folder: Path) -> TokparityError:
    return TokparityError(f"{shown_path(path)}: a link to {shown_path(real)}, outside the model folder "
                          f"{shown_path(folder)}; tokparity reads a model's files only inside its folder: copy the "
                          "file in, or remove the link")


def files_read_with(path: Path) -> list[Path]:
    """The files a run may read for the local model at ``path``, a file or a folder, that exist as
    regular files: in a folder, those of ``MODEL_FILE_SUFFIXES`` at its top and the templates in
    additional_chat_templates/; for one file, it and the files read beside it (``READ_BESIDE``,
    the ``CONFIGURATION`` that ``tokparity check`` reads, its test texts, the named templates)."""
    folder = path if path.is_dir() else path.parent
    if path.is_dir():
        found = [p for p in folder.iterdir() if p.suffix in MODEL_FILE_SUFFIXES]
    else:
        found = [path, *(folder / name for name in READ_BESIDE + CONFIGURATION),
                 *(path.with_name(path.name + suffix) for suffix in (".inp", ".out"))]
    found += (folder / "additional_chat_templates").glob("*.jinja")
    return sorted(p for p in found if p.is_file())
