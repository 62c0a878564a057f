"""The special tokens of other releases of a model: the table an engine may carry in place of
the one in the model's files.

An engine written for one release of a model family and run on another keeps its own list of
special tokens: llama3-tokenizer-js names Llama 3.1's specials on Llama 3's ids (its
``<|reserved_special_token_2|>`` is 128005, Llama 3's 128004); kitoken's tiktoken converter gives
cl100k_base the ChatML tokens of OpenAI's chat build (``<|im_start|>`` 100264), which the file does
not have. Each release below is recognised by special tokens the model's own files have (every
one of them, at its id) and lacks (those that mark the other release), and gives the other
release's whole table; the variant
``specials.other-release`` (variants/specials.py) encodes with that table in place of the model's.

    >>> [r.name for r in RELEASES]
    ['Llama 3.1', "cl100k_base's chat build (ChatML)", 'o200k_harmony (gpt-oss)']
    >>> llama31 = RELEASES[0].table
    >>> llama31["<|finetune_right_pad_id|>"], llama31["<|reserved_special_token_2|>"], len(llama31)
    (128004, 128005, 256)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from tokparity.vocab.model import Vocab


@dataclass(frozen=True)
class OtherRelease:
    key: str  # the variant's ("specials.other-release:llama-3.1")
    name: str
    source: str  # where the table was read
    recognised_by: Mapping[str, int]  # special tokens of the model's own files, at their ids
    marks: frozenset[str]  # texts only the other release has at its ids (a file with them is that release)
    table: Mapping[str, int]  # the other release's special tokens, text -> id

    @cached_property
    def pattern(self) -> re.Pattern:
        """The table's texts as one group to cut a text at."""
        return alternation(self.table)

    def sibling_of(self, vocab: Vocab) -> bool:
        """Whether ``vocab`` is a model this release is another release of (and not that one)."""
        return all(vocab.id_of(text) == i for text, i in self.recognised_by.items()) and \
            not any(vocab.id_of(text) == self.table[text] for text in self.marks)

    def differing(self, vocab: Vocab) -> re.Pattern | None:
        """The table's texts that ``vocab`` does not have at the same id, as one group (None: none):
        where a text holds none of them, this release's table gives what the model's own does."""
        texts = [text for text, i in self.table.items() if vocab.id_of(text) != i]
        return alternation(texts) if texts else None


def alternation(texts) -> re.Pattern:
    """``texts`` as one capturing group, longest first (a special text that starts another is
    tried after it), to cut a text at with ``split``."""
    return re.compile("(" + "|".join(map(re.escape, sorted(texts, key=lambda t: (-len(t), t)))) + ")")


def _llama(names: list[str], first_reserved: int) -> dict[str, int]:
    """Meta's tiktoken tables of Llama 3: the named tokens from 128000, then reserved ones up to 256."""
    reserved = [f"<|reserved_special_token_{first_reserved + i}|>" for i in range(256 - len(names))]
    return {text: 128000 + i for i, text in enumerate(names + reserved)}


RELEASES = (
    OtherRelease(
        "llama-3.1", "Llama 3.1", "Llama 3.1's tokenizer.json (meta-llama/Llama-3.1-8B) as llama3-tokenizer-js 1.2.0 "
        "bundles it",
        {"<|begin_of_text|>": 128000, "<|reserved_special_token_2|>": 128004, "<|eot_id|>": 128009},
        frozenset({"<|finetune_right_pad_id|>", "<|eom_id|>", "<|python_tag|>"}),
        _llama(["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
                "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"], 3)),
    OtherRelease(
        "cl100k-chatml", "cl100k_base's chat build (ChatML)",
        "kitoken 0.10.1, src/convert/tiktoken.rs: cl100k_base's specials and ChatML's two at OpenAI's ids",
        {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|endofprompt|>": 100276},
        frozenset({"<|im_start|>", "<|im_end|>"}),
        {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
         "<|im_start|>": 100264, "<|im_end|>": 100265, "<|endofprompt|>": 100276}),
    OtherRelease(
        "o200k-harmony", "o200k_harmony (gpt-oss)", "tiktoken 0.12+, tiktoken_ext/openai_public.py: o200k_harmony",
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        frozenset({"<|start|>", "<|message|>", "<|channel|>"}),
        {"<|startoftext|>": 199998, "<|endoftext|>": 199999, "<|return|>": 200002, "<|constrain|>": 200003,
         "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008, "<|call|>": 200012,
         "<|endofprompt|>": 200018,
         **{f"<|reserved_{i}|>": i for i in (200000, 200001, 200004, 200009, 200010, 200011, *range(200013, 201088))}}),
)

