"""``py:`` streamers on tokenizers' decode, as a newcomer writes one: each step decodes every id so
far and sends what lies past the text sent before (tests/run/test_stream_switch.py).

    Eager               sends each step's text at once, U+FFFD of a character split between ids
                        included, and skips special tokens as tokenizers' decode does by default:
                        two bugs
    EagerKeepingSpecials  the first bug alone: special tokens written
    SkippingSpecials    the second bug alone: a character split between ids is held back
    Right               the twin: holds back a split character, writes special tokens
"""

from __future__ import annotations

from tokenizers import Tokenizer


class Right:
    skip_special = False
    hold_back = True

    def __init__(self, files: dict[str, str]):
        self.tok = Tokenizer.from_file(files["tokenizer_json"])

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        raise NotImplementedError

    def stream(self, ids: list[int], prompt: int) -> list[str]:
        sent = self.tok.decode(ids[:prompt], skip_special_tokens=self.skip_special)
        if self.hold_back:  # (a prompt that ends inside a character: that character is still to send)
            sent = sent.removesuffix("\ufffd")
        deltas = []
        for end in range(prompt + 1, len(ids) + 1):
            text = self.tok.decode(ids[:end], skip_special_tokens=self.skip_special)
            if self.hold_back and text.endswith("\ufffd"):
                deltas.append("")  # (the character is not complete yet)
                continue
            deltas.append(text[len(sent):])
            sent = text
        return deltas


class Eager(Right):
    skip_special = True  # (tokenizers' decode's default)
    hold_back = False


class EagerKeepingSpecials(Right):
    hold_back = False


class SkippingSpecials(Right):
    skip_special = True
