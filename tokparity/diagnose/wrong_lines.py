"""Wrong decoders that write line ends their own way: each CR LF and each lone CR made LF (a text
read in Python's or a browser's text mode, "universal newlines"), or each CR LF alone (a Windows
pipe). The decoded text, or each piece of a token table. Each takes ``(reference, ids, prompt, asked)`` as those of
``tokparity.diagnose.wrong_decoders`` do, and ``tokparity.diagnose.decoding``'s ``VARIANTS`` lists them.
"""

from __future__ import annotations

from tokparity.diagnose.wrong_decoders import decoded
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings


def as_lf(text: str) -> str:
    """``text`` with each CR LF and each lone CR written as LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def text_newlines_normalized(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The decoded text with its line ends made LF: each CR LF and each lone CR (reading in text
    mode), or each CR LF alone (a Windows pipe). Each form None where it changes nothing."""
    text = decoded(ref, ids, asked)
    return [None if f == text else f for f in (as_lf(text), text.replace("\r\n", "\n"))]


def pieces_newlines_normalized(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each piece with its line ends made LF (a table written as text lines and read back, as
    DeepInfra's ``get_token_strings`` does); None where no piece holds a CR."""
    right = ref.piece_bytes(ids)
    pieces = [p.replace(b"\r\n", b"\n").replace(b"\r", b"\n") for p in right]
    return [pieces if pieces != right else None]
