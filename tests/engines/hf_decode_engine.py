"""``py:`` engines on transformers' AutoTokenizer (the model's tokenizer.json and tokenizer_config.json)
whose decode takes the settings tokparity asks, each with at most one bug
(tests/run/test_decode_settings.py):

    Engine             every setting applied: clean_up_tokenization_spaces (transformers' own clean-up, called
                       here: 5.23's decode ignores it set on for a BPE model); special and added
                       tokens spaced apart as vLLM's detokenizer does it (its
                       ``_convert_tokens_to_string_with_added_encoders``, written again here on
                       transformers' own tokens: transformers 5.23 takes the switch and drops it)
    CleanUpIgnored     takes clean_up_tokenization_spaces and does not apply it: the library's own decode
                       whatever is asked (on Llama 3, a BPE model, transformers 5.23 never cleans up)
    SpacingIgnored     takes spaces_between_special_tokens and passes it to transformers, which drops it
    LstripWhenLong     a fast path for more than 24 ids that takes one leading space off each id's
                       bytes (llama.cpp's lstrip on every token), right on shorter sequences: a bug
                       narrower than decode.lstrip, which the run's verdict must not call proven
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import transformers


class Engine:
    def __init__(self, files: dict[str, str]):
        folder = Path(tempfile.mkdtemp(prefix="tokparity-hf-decode-"))
        for role, name in (("tokenizer_json", "tokenizer.json"), ("tokenizer_config", "tokenizer_config.json")):
            if role in files:
                shutil.copy(files[role], folder / name)
        self.tok = transformers.AutoTokenizer.from_pretrained(str(folder))
        shutil.rmtree(folder)

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=add_special, split_special_tokens=not parse_special))

    def decode(self, ids: list[int], skip_special: bool = False, clean_up_tokenization_spaces: bool | None = None,
               spaces_between_special_tokens: bool = False) -> str:
        if spaces_between_special_tokens:
            return self._spaced(ids, skip_special, clean_up_tokenization_spaces)
        if clean_up_tokenization_spaces is None:  # (as the files say)
            return self.tok.decode(ids, skip_special_tokens=skip_special)
        # transformers 5.23 ignores clean_up_tokenization_spaces=True on a BPE model: done here
        text = self.tok.decode(ids, skip_special_tokens=skip_special, clean_up_tokenization_spaces=False)
        return self.tok.clean_up_tokenization(text) if clean_up_tokenization_spaces else text

    def _spaced(self, ids: list[int], skip_special: bool, clean_up: bool | None) -> str:
        """vLLM's way: the runs of ordinary tokens turned into a string apart from each added token,
        joined by spaces; a skipped special token dropped before the runs are made."""
        added, specials = self.tok.get_added_vocab(), set(self.tok.all_special_tokens)
        parts: list[str] = []
        run: list[str] = []
        for token in self.tok.convert_ids_to_tokens(ids):
            if skip_special and token in specials:
                continue
            if token in added:
                if run:
                    parts.append(self.tok.convert_tokens_to_string(run))
                    run = []
                parts.append(token)
            else:
                run.append(token)
        if run:
            parts.append(self.tok.convert_tokens_to_string(run))
        text = " ".join(parts)
        return self.tok.clean_up_tokenization(text) if clean_up else text


class CleanUpIgnored(Engine):
    def decode(self, ids: list[int], skip_special: bool = False, clean_up_tokenization_spaces: bool | None = None,
               spaces_between_special_tokens: bool = False) -> str:
        return super().decode(ids, skip_special, None, spaces_between_special_tokens)


class SpacingIgnored(Engine):
    def decode(self, ids: list[int], skip_special: bool = False, clean_up_tokenization_spaces: bool | None = None,
               spaces_between_special_tokens: bool = False) -> str:
        forced = {} if clean_up_tokenization_spaces is None else \
            {"clean_up_tokenization_spaces": clean_up_tokenization_spaces}
        return self.tok.decode(ids, skip_special_tokens=skip_special,
                               spaces_between_special_tokens=spaces_between_special_tokens, **forced)


class LstripWhenLong(Engine):
    LONG = 24

    def decode(self, ids: list[int], skip_special: bool = False, clean_up_tokenization_spaces: bool | None = None,
               spaces_between_special_tokens: bool = False) -> str:
        if len(ids) <= self.LONG:
            return super().decode(ids, skip_special, clean_up_tokenization_spaces, spaces_between_special_tokens)
        byte_of = _byte_of()
        added, specials = self.tok.get_added_vocab(), set(self.tok.all_special_tokens)
        data = b""
        for token in self.tok.convert_ids_to_tokens(ids):
            if skip_special and token in specials:
                continue
            piece = token.encode() if token in added else bytes(byte_of[ch] for ch in token)
            data += piece[1:] if piece.startswith(b" ") else piece
        return data.decode("utf-8", "replace")


def _byte_of() -> dict[str, int]:
    """GPT-2's byte-level alphabet read back: each character of a token, the byte it stands for."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted = [b for b in range(256) if b not in kept]
    return {chr(b): b for b in kept} | {chr(256 + k): b for k, b in enumerate(shifted)}

