"""A ``py:`` table of every id's bytes, made from the tokens of the model's tokenizer.json as
transformers-cfg 0.2.7's ``LLAMAByteProxyMapper`` makes it: a byte token ``<0xHH>`` is its byte, and
a token's ``▁`` are spaces only when the token begins with one. ``Engine`` has that bug (``>▁</``
keeps its ``▁``); ``Twin`` turns every ``▁`` into a space. tests/run/test_leading_mark_table.py."""

from __future__ import annotations

import re

from tokenizers import Tokenizer

BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


class Twin:
    leading_only = False

    def __init__(self, files: dict[str, str]):
        self.tok = Tokenizer.from_file(files["tokenizer_json"])

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        raise NotImplementedError

    def pieces(self) -> list[bytes | None]:
        return [self._bytes(self.tok.id_to_token(i)) for i in range(self.tok.get_vocab_size())]

    def _bytes(self, token: str | None) -> bytes | None:
        if token is None:
            return None
        byte = BYTE_TOKEN.fullmatch(token)
        if byte:
            return bytes.fromhex(byte.group(1))
        if token.startswith("\u2581") or not self.leading_only:
            token = token.replace("\u2581", " ")
        return token.encode("utf-8")


class Engine(Twin):
    leading_only = True
