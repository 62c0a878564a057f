"""Who wrote a journal: its header is signed, and each of its lines sealed, with a secret of this
user's (``$TOKPARITY_CACHE/journal-key``, 0600). A resume trusts a journal only when the key
checks: one someone else wrote (or edited) needs ``--trust-journal``. Without that, an edited
record could claim a verdict no engine gave, and an edited header could run its commands.

The header's ``signature`` covers the whole header (the command, its arguments, the corpora's and
models' fingerprints). A line's ``seal`` covers the line and the header's signature, so a line
taken from another journal does not check either."""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
from pathlib import Path

from tokparity.errors import BadJournal, TokparityError

KEY_FILE = "journal-key"


SIGNED = ("backends", "oracle")  # the stored arguments that name programs a resume runs
# the stored arguments that name library releases a resume would install (pip may build one from source)
INSTALLED = ("try_release",)


def commands_in(args: dict) -> list[str]:
    """The programs (``cmd:``) and Python code (``py:``) the stored arguments would run: every
    backend or oracle that is not one of tokparity's own (a library release too: pip installs it);
    the releases ``--try-release`` would install; and a Ray cluster a resume would attach
    to (``--ray ADDRESS``): the driver unpickles what that cluster's actors send back, so a cluster
    named by a journal someone else wrote could run code here."""
    from tokparity.backends.registry import BUILTIN

    named: list[str] = []
    for key in SIGNED:
        value = args.get(key)
        for spec in value if isinstance(value, list) else [value]:
            if isinstance(spec, str) and _backend_of(spec) not in BUILTIN and spec not in named:
                named.append(spec)
    for key in INSTALLED:
        value = args.get(key)
        for spec in value if isinstance(value, list) else [value]:
            if isinstance(spec, str) and f"--try-release {spec}" not in named:
                named.append(f"--try-release {spec}")
    ray = args.get("ray")
    if isinstance(ray, str) and ray not in ("", "local"):  # (a Ray started here runs nothing of the file's)
        named.append(f"--ray {ray}")
    return named


def engines_in(args: dict) -> list[str]:
    """The ``cmd:`` and ``py:`` engines the stored arguments name: their relative paths point at
    the folder the run began in."""
    specs = [args.get(key) for key in SIGNED]
    flat = [s for v in specs for s in (v if isinstance(v, list) else [v])]
    return [s for s in flat if isinstance(s, str) and _backend_of(s).startswith(("cmd:", "py:"))]


def _backend_of(spec: str) -> str:
    """``"fast=hf" -> "hf"``: a named built-in runs nothing of a user's; a name that does not parse
    is taken for a command (and must be signed)."""
    from tokparity.backends.registry import split_label

    try:
        return split_label(spec)[1].strip()
    except TokparityError:
        return spec


def key_path() -> Path:
    from tokparity.zoo.fetch import cache_dir

    return cache_dir() / KEY_FILE


def _key_bytes(path: Path) -> bytes:
    """The key file's first bytes, read only from a regular file (a FIFO would block, a device
    never end) that is no symbolic link (it could point at anyone's file): anything else reads as
    no key at all, which is then refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.ELOOP:
            return b"(a symbolic link)"
        raise
    try:
        return os.read(fd, 4096) if stat.S_ISREG(os.fstat(fd).st_mode) else b"(not a file)"
    finally:
        os.close(fd)


def journal_key(create: bool) -> bytes | None:
    """This user's secret, made (0600, in the cache folder) on first use; None if there is none yet."""
    path = key_path()
    try:
        try:
            raw = _key_bytes(path)
            key = raw.removesuffix(b"\n")  # (as written: the digits and one newline, nothing else)
        except FileNotFoundError:
            if not create:
                return None
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # another run made it just now
                fd = -1
            if fd >= 0:
                with os.fdopen(fd, "w") as f:
                    f.write(secrets.token_hex(32) + "\n")
            raw = _key_bytes(path)
            key = raw.removesuffix(b"\n")
    except OSError as e:
        raise BadJournal(f"{path}: cannot {'create' if create else 'read'} the journal key ({e.strerror or e}); "
                         "set TOKPARITY_CACHE to a folder you can write") from None
    if not raw.strip():  # a run killed between making the file and writing it
        raise BadJournal(f"{path}: the journal key is empty; delete the file (a new key is made on the next run, "
                         "and journals signed with the old one need --trust-journal)")
    if not re.fullmatch(rb"[0-9a-f]{64}\n", raw):  # (a file written over it: its bytes may be anyone's)
        raise BadJournal(f"{path}: this is not a journal key tokparity made (64 hex digits); delete the file (a new "
                         "key is made on the next run, and journals signed with the old one need --trust-journal)")
    return key


def signature(key: bytes, header: dict) -> str:
    """HMAC-SHA256 of the header (all but its signature), as canonical JSON."""
    signed = {k: v for k, v in header.items() if k != "signature"}
    text = json.dumps(signed, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()


SEAL = re.compile(rb'(.*), "seal": "([0-9a-f]{32})"\}')


def sealed(key: bytes, signed: str, line: str) -> str:
    """``line`` (a JSON object's text) with its seal as a last key."""
    return f'{line[:-1]}, "seal": "{_seal(key, signed, line.encode())}"}}'


def _seal(key: bytes, signed: str, line: bytes) -> str:
    return hmac.digest(key, signed.encode("ascii") + b"\n" + line, "sha256").hex()[:32]


def seal_holds(key: bytes, signed: str, raw: bytes) -> bool:
    """Whether the line ``raw`` (its newline taken off) carries the seal of its text."""
    match = SEAL.fullmatch(raw)
    return match is not None and hmac.compare_digest(
        match[2].decode("ascii"), _seal(key, signed, match[1] + b"}"))


def check_signature(path: Path, header: dict) -> bytes:
    """This user's key, once it checks the header's signature; else refuse the journal: a resume
    would run its commands, and count its records as judged."""
    key = journal_key(create=False)
    stored = header.get("signature")
    if key is not None and isinstance(stored, str) and hmac.compare_digest(stored, signature(key, header)):
        return key
    commands = commands_in(header["args"])
    shown = ", ".join(json.dumps(c, ensure_ascii=True) for c in commands)  # escaped: one line, nothing hidden
    would = "count its records as judged without running them" + (f", and run {shown}" if commands else "")
    raise BadJournal(f"{path}: this journal was not written by your tokparity (its header is not signed with your "
                     f"key {key_path()}), and resuming it would {would}; read it, and resume with --trust-journal "
                     "only if you trust it")


def unsealed(path: Path, lineno: int) -> BadJournal:
    return BadJournal(f"{path}:{lineno}: this line was not written by your tokparity (it is not sealed with your key "
                      f"{key_path()}): it was edited, or comes from another journal; a resume would count its cases "
                      "as judged without running them: start a new run without --resume, or resume with "
                      "--trust-journal if you trust the file")
