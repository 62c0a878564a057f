"""A ``py:`` decoder on tokenizers (the model's tokenizer.json) whose loop over the tokens reads a run
of byte tokens with a look-ahead, as @lenml/llama2-tokenizer 1.1.4's ``convert_tokens_to_string``
does: ``Engine`` steps past the token that ends the run and never writes it; ``Twin`` writes it.
``Package`` also keeps the space the first token begins with, as the package does.
tests/run/test_byte_run_decoder.py."""

from __future__ import annotations

import re

from tokenizers import Tokenizer

BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")


class Twin:
    drops_look_ahead = False

    def __init__(self, files: dict[str, str]):
        self.tok = Tokenizer.from_file(files["tokenizer_json"])

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        raise NotImplementedError

    def decode(self, ids: list[int], skip_special: bool = False) -> str:
        kept, k = [], 0
        while k < len(ids):
            if not self._byte(ids[k]):
                kept.append(ids[k])
                k += 1
                continue
            while k < len(ids) and self._byte(ids[k]):  # (the run, read up to the token that ends it)
                kept.append(ids[k])
                k += 1
            if k < len(ids) and not self.drops_look_ahead:
                kept.append(ids[k])
            k += 1
        return self.tok.decode(kept, skip_special_tokens=skip_special)

    def _byte(self, i: int) -> bool:
        return bool(BYTE_TOKEN.fullmatch(self.tok.id_to_token(i) or ""))


class Engine(Twin):
    drops_look_ahead = True


class Package(Engine):
    """The package's whole decode: the space the first token begins with is kept too."""

    def decode(self, ids: list[int], skip_special: bool = False) -> str:
        text = super().decode(ids, skip_special)  # (its decoder strips one space: the first token's)
        leading = bool(ids) and (self.tok.id_to_token(ids[0]) or "").startswith("\u2581")
        return " " + text if leading else text
