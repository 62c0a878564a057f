"""RWKV World vocabulary file -> ``Vocab`` (algorithm ``rwkv``).

The ``rwkv`` package ships its tokenizer as ``rwkv_vocab_v20230424.txt``: one token a line,
``ID LITERAL LENGTH``, the token written as a Python ``str`` or ``bytes`` literal and its length
in UTF-8 bytes::

    33 '@' 1
    257 '\\x00\\x00' 2
    10250 b'\\xe4\\xb8' 2

The package reads each literal with ``eval``; this loader never evaluates anything from the file:
``ast.literal_eval`` accepts literals only, and a line whose token is anything else (a call, a
name, an f-string) is refused with one line naming it. The lines are split as the package splits
them (the id before the first space, the length after the last one), so both read the same token.

Conventions of the resulting ``Vocab``:

* ids are the file's ids, which must count up from 1 without gaps (the package keys tokens by
  id, llama.cpp's converter by line order: on such a file both agree);
* id 0 is not in the file. RWKV World uses it as end of text; it becomes the control token
  ``<s>``, the name llama.cpp's converter gives it (``_set_vocab_rwkv_world``), so that the ids
  of this ``Vocab`` and of a GGUF made from it are the same;
* each token's text is its bytes read as UTF-8, with bytes that are not valid UTF-8 kept as
  surrogate escapes (``token.encode("utf-8", "surrogateescape")`` gives the bytes back), as for
  every ``Vocab``.

A GGUF spells each RWKV token with escapes (``escape_llama_rwkv``, what llama.cpp's converter
writes; ``unescape_llama_rwkv``, how llama.cpp reads it back).
"""

from __future__ import annotations

import ast
import os
import re

from tokparity.errors import BadModelFile
from tokparity.vocab.model import TokenType, Vocab

END_OF_TEXT = "<s>"  # id 0, as llama.cpp's converter names it
SOURCE_FORMAT = "rwkv-vocab"
# What the first line of such a file looks like: an id, a space, a str or bytes literal.
FIRST_LINE = re.compile(rb"\d+ b?['\"]")


def parse_line(line: str, number: int, path: object) -> tuple[int, bytes]:
    """``"33 '@' 1\\n"`` -> ``(33, b"@")``; anything else is a ``BadModelFile`` naming the line."""
    where = f"line {number}"
    first, last = line.find(" "), line.rfind(" ")
    if first < 0 or first == last:
        raise BadModelFile(path, f"{where}: expected 'ID TOKEN LENGTH' (an id, a Python str or bytes literal, its "
                                 f"length in bytes), got {_shown(line)}")
    try:
        token_id, length = int(line[:first]), int(line[last:])
    except ValueError:
        raise BadModelFile(path, f"{where}: the id and the length must be integers, got {_shown(line)}") from None
    literal = line[first:last].strip(" \t")
    try:
        value = ast.literal_eval(literal)  # literals only: nothing from the file is run
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise BadModelFile(path, f"{where}: the token is not a Python str or bytes literal ({_shown(literal)}); "
                                 "refusing the file, nothing in it was run") from None
    if isinstance(value, str):
        try:
            value = value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadModelFile(path, f"{where}: the token holds a lone surrogate, which has no UTF-8 bytes "
                                     f"({_shown(literal)})") from None
    if not isinstance(value, bytes):
        raise BadModelFile(path, f"{where}: the token is a {type(value).__name__} literal, expected a str or bytes "
                                 f"literal ({_shown(literal)})")
    if len(value) != length:
        raise BadModelFile(path, f"{where}: the token has {len(value)} bytes but the line says {length}")
    return token_id, value


def _shown(text: str, limit: int = 60) -> str:
    text = text.rstrip("\n")
    return repr(text if len(text) <= limit else text[:limit] + "…")


def unescape_llama_rwkv(escaped: bytes) -> bytes:
    """llama.cpp's ``llama_unescape_rwkv_token``: a GGUF token's text back to its bytes.

    Its converter writes each token as ``repr(token_bytes)[2:-1]``, so ``\\xNN``, ``\\t``, ``\\n``,
    ``\\r``, ``\\\\`` and ``\\'`` are escapes, and any other ``\\c`` stands for ``c``. The hex digits are
    read as llama.cpp reads them (``c >= 'a' ? c - 'a' + 10 : c - '0'`` in a byte): lowercase, as
    Python writes them; anything else gives the byte llama.cpp computes, not an error.

    ``b"a\\\\xe4\\\\xb8\\\\x80\\\\n"`` -> ``b"a\\xe4\\xb8\\x80\\n"``
    """
    out = bytearray()
    escaping, hex_left, acc = False, 0, 0
    for c in escaped:
        if hex_left:
            value = c - 0x61 + 10 if c >= 0x61 else c - 0x30
            acc = ((acc << 4) + value) & 0xFF
            hex_left -= 1
            if not hex_left:
                out.append(acc)
                acc = 0
        elif escaping:
            escaping = False
            if c == 0x78:  # x
                hex_left = 2
            else:
                out.append({0x74: 0x09, 0x6E: 0x0A, 0x72: 0x0D}.get(c, c))  # \t \n \r, else the character
        elif c == 0x5C:  # backslash
            escaping = True
        else:
            out.append(c)
    return bytes(out)


def escape_llama_rwkv(token: bytes) -> str:
    """What llama.cpp's converter writes for a token (``_set_vocab_rwkv_world``):
    ``repr(token)[2:-1]``, e.g. ``b"\\xe4\\xb8\\x80"`` -> ``"\\\\xe4\\\\xb8\\\\x80"``, ``b"'"`` -> ``"'"``."""
    return repr(token)[2:-1]


def read_rwkv_vocab(path: str | os.PathLike) -> list[bytes]:
    """The tokens of the file, by id (index 0 is id 1)."""
    try:
        # Universal newlines, as the package reads it (open(..., "r").readlines()).
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except UnicodeDecodeError as e:
        raise BadModelFile(path, f"not UTF-8 text (byte {e.start}); an RWKV vocabulary is a UTF-8 text file") from None
    except OSError as e:
        raise BadModelFile(path, f"cannot read it ({e.strerror or e})") from None
    tokens: list[bytes] = []
    for number, line in enumerate(lines, 1):
        token_id, token = parse_line(line, number, path)
        if token_id != len(tokens) + 1:
            raise BadModelFile(path, f"line {number}: id {token_id}, expected {len(tokens) + 1} (ids count up from 1 "
                                     "without gaps)")
        tokens.append(token)
    if not tokens:
        raise BadModelFile(path, "holds no tokens; not a usable tokenizer")
    return tokens


def load_rwkv_vocab(path: str | os.PathLike) -> Vocab:
    tokens = read_rwkv_vocab(path)
    return Vocab(
        algorithm="rwkv",
        tokens=[END_OF_TEXT] + [t.decode("utf-8", "surrogateescape") for t in tokens],
        token_types=[int(TokenType.CONTROL)] + [int(TokenType.NORMAL)] * len(tokens),
        special_ids={"bos": 0, "eos": 0},
        source=str(path),
        source_format=SOURCE_FORMAT,
    )
