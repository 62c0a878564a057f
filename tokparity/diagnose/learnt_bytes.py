"""A piece of bytes written as text, learnt from the case: a table that shows a byte token as
``byte: \\xf0``, ``<0xF0>`` or ``\\xf0`` in place of its byte (llama.cpp's server writes
``byte: \\x`` and the hex of a one-byte piece from 0x80 up).

A pieces mismatch that no named variant reproduces, where only pieces that are not UTF-8 alone
differ, is read as such a notation. The notation is read off a one-byte piece: the text around
the byte's value, and how the value is written (two hex digits, in lower or upper case, or
decimal). Two scopes are tried: the one-byte pieces from 0x80 up, or every piece that is not
UTF-8 alone, each of its bytes so written. The key (``pieces.bytes-as-text:["byte: \\\\x", "x",
"", "one byte"]``) holds what was learnt, so the run's verdict can try it on every case.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings

CAUSE = "pieces.bytes-as-text"
NOTATIONS = {"x": "{:02x}", "X": "{:02X}", "d": "{:d}"}
SCOPES = ("one byte", "not UTF-8")


def is_notation(key: str) -> bool:
    return key.startswith(CAUSE + ":")


def parse(key: str) -> tuple[str, str, str, str]:
    head, notation, tail, scope = json.loads(key.partition(":")[2])
    return str(head), str(notation), str(tail), str(scope)


def key_of(head: str, notation: str, tail: str, scope: str) -> str:
    return f"{CAUSE}:{json.dumps([head, notation, tail, scope], ensure_ascii=False)}"


def _example(key: str) -> str:
    head, notation, tail, _ = parse(key)
    return head + {"x": "NN", "X": "NN", "d": "N"}[notation] + tail


def said_of(key: str) -> str:
    """The key in words: ``each one-byte piece from 0x80 up written as 'byte: \\xNN'``."""
    scope = parse(key)[3]
    which = "each one-byte piece from 0x80 up" if scope == "one byte" else "each byte of a piece that is not UTF-8 alone"
    return f"{which} written as '{_example(key)}'"


def does(key: str) -> str:
    """What a table with the learnt notation does, as the evidence says it."""
    return f"writes {said_of(key)}"


def _not_text(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def written(piece: bytes, head: str, notation: str, tail: str, scope: str) -> bytes:
    """The piece as a table with the notation writes it: itself where the scope leaves it."""
    if scope == "one byte" and not (len(piece) == 1 and piece[0] >= 0x80):
        return piece
    if scope == "not UTF-8" and not _not_text(piece):
        return piece
    return "".join(head + NOTATIONS[notation].format(b) + tail for b in piece).encode("utf-8")


def run_of(key: str) -> Callable[[RefTokenizer, list[int], int, DecodeSettings], list]:
    """The pieces of a table that writes bytes as ``key`` says: None where no piece changes."""
    head, notation, tail, scope = parse(key)

    def run(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
        right = ref.piece_bytes(ids)
        pieces = [written(p, head, notation, tail, scope) for p in right]
        return [pieces if pieces != right else None]

    return run


def learnt(ref: RefTokenizer, ids: list[int], got: object) -> list[str]:
    """The keys of the notations that turn the reference's pieces into the engine's ``got``; none
    where a piece that differs is UTF-8 text, or no one-byte piece shows the notation."""
    right = ref.piece_bytes(ids)
    if not isinstance(got, list) or len(got) != len(right):
        return []
    changed = [(r, g) for r, g in zip(right, got) if r != g]
    if not changed or any(not _not_text(r) for r, _ in changed):
        return []
    # (a byte whose hex holds a letter shows the case of its digits)
    ones = sorted(((r[0], g) for r, g in changed if len(r) == 1), key=lambda rg: f"{rg[0]:02x}".isdigit())
    if not ones:
        return []
    one = ones[0]
    value, text = one[0], one[1].decode("utf-8", "replace")
    keys = []
    for notation, form in NOTATIONS.items():
        at = text.rfind(form.format(value))
        if at < 0:
            continue
        head, tail = text[:at], text[at + len(form.format(value)):]
        for scope in SCOPES:
            if [written(p, head, notation, tail, scope) for p in right] == got:
                keys.append(key_of(head, notation, tail, scope))
        if keys:
            break
    return keys
