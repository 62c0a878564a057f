"""Special and user-defined tokens: which ones exist, and cutting the input around them.

Before any algorithm runs, the input is partitioned: each occurrence of a special token's text
becomes that token, and only the text between occurrences is tokenized. This is llama.cpp's
``tokenizer_st_partition``:

* the candidates are every CONTROL, USER_DEFINED and UNKNOWN token, longest text first;
* with ``parse_special`` off, CONTROL and UNKNOWN tokens are skipped but USER_DEFINED tokens
  are still cut out (as Hugging Face does with added tokens);
* for each candidate in turn, every remaining text fragment is searched left to right;
* a token with ``lstrip`` eats the whitespace before it, one with ``rstrip`` the whitespace after.

Which tokens are CONTROL is not only what the file says: llama.cpp promotes tokens whose text
looks like an end-of-turn or fill-in-the-middle marker (``<|im_end|>``, ``<EOT>``, …) and sets
lstrip/rstrip for a few model families by name (``llama_token_attrs`` mirrors that).

    >>> partition("a<s>b", [Special(1, "<s>")], parse_special=True)
    ['a', 1, 'b']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tokparity.vocab.model import TokenType, Vocab

# Token texts llama.cpp treats as end-of-generation / turn markers (llama_vocab::impl::load).
EOT_TEXTS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
             "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>")
EOG_TEXTS = EOT_TEXTS + ("<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "</s>", "<|eom_id|>", "[EOS]", "<eos>",
                         "<turn|>", "<|tool_response>", "[e~[")
FIM_TEXTS = {
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
    "eom": ("<|eom_id|>",),
}


@dataclass(frozen=True)
class Special:
    """One token the partition cuts out."""

    id: int
    text: str
    parse_only: bool = False  # CONTROL / UNKNOWN: only with parse_special
    lstrip: bool = False
    rstrip: bool = False


def llama_token_types(vocab: Vocab) -> list[int]:
    """Token types after llama.cpp's load-time corrections (text-based CONTROL promotion and
    the ``</s>``-is-normal rule of Gemma 4); GGUF files only."""
    types = list(vocab.token_types or [TokenType.NORMAL] * vocab.size)
    promote = set(EOG_TEXTS)
    for role, texts in FIM_TEXTS.items():
        if role not in vocab.special_ids:
            promote.update(texts)
    for text in promote:
        i = vocab.id_of(text)
        if i is not None and types[i] != TokenType.UNKNOWN:
            # llama.cpp ORs the CONTROL bit in; for partitioning and decoding that makes the
            # token behave as CONTROL whatever it was (a USER_DEFINED one becomes parse-only).
            types[i] = TokenType.CONTROL
    eos = vocab.id_of("</s>")
    if eos is not None and vocab.id_of("<|tool_response>") is not None:  # Gemma 4: "</s>" is an ordinary token
        types[eos] = TokenType.NORMAL
    for text in ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"):  # gpt-oss
        i = vocab.id_of(text)
        if i is not None:
            types[i] = TokenType.USER_DEFINED
    return types


def llama_specials(vocab: Vocab, types: list[int]) -> list[Special]:
    """The partition candidates as llama.cpp builds them (``cache_special_tokens``), with the
    per-model lstrip/rstrip it sets by name."""
    name = str(vocab.extra.get("general.name", "")).lower()
    arch = str(vocab.extra.get("general.architecture", ""))
    pre = vocab.pre_tokenizer or ""
    kinds = np.asarray(types)
    candidates = np.flatnonzero((kinds == TokenType.CONTROL) | (kinds == TokenType.USER_DEFINED)
                                | (kinds == TokenType.UNKNOWN)).tolist()  # a few among 262k tokens
    specials = [Special(i, vocab.tokens[i], parse_only=types[i] != TokenType.USER_DEFINED) for i in candidates]
    phi3 = "phi-3" in name or "phi3" in name
    lstrip_mask = (any(k in pre for k in ("jina-v2-de", "jina-v2-es", "jina-v2-code"))
                   or any(k in arch for k in ("nomic-bert-moe", "jina-bert-v3")))
    out = []
    for s in specials:
        lstrip = rstrip = False
        if lstrip_mask:
            lstrip = s.text == "<mask>"
        elif phi3:
            rstrip = s.text not in ("<unk>", "<s>", "<|endoftext|>")
        elif "modern-bert" in name:
            lstrip = s.text == "[MASK]"
        out.append(Special(s.id, s.text, s.parse_only, lstrip, rstrip))
    # Longest text first; equal lengths by id (llama.cpp's std::sort leaves them unspecified).
    out.sort(key=lambda s: (-len(s.text.encode("utf-8", "surrogateescape")), s.id))
    return out


def _isspace(ch: str) -> bool:
    """C's ``isspace`` on one byte, which is what llama.cpp's lstrip/rstrip test."""
    return ch in " \t\n\v\f\r"


def partition(text: str, specials: list[Special], parse_special: bool) -> list[str | int]:
    """Cut ``text`` into raw-text fragments (str) and special token ids (int)."""
    fragments: list[str | int] = [text] if text else []
    for special in specials:
        if special.parse_only and not parse_special:
            continue
        if not special.text:
            continue
        out: list[str | int] = []
        for frag in fragments:
            if not isinstance(frag, str) or special.text not in frag:
                out.append(frag)
                continue
            rest = frag
            while True:
                at = rest.find(special.text)
                if at < 0:
                    if rest:
                        out.append(rest)
                    break
                left = rest[:at]
                if special.lstrip:
                    while left and _isspace(left[-1]):
                        left = left[:-1]
                if left:
                    out.append(left)
                out.append(special.id)
                rest = rest[at + len(special.text):]
                if special.rstrip:
                    i = 0
                    while i < len(rest) and _isspace(rest[i]):
                        i += 1
                    rest = rest[i:]
        fragments = out
    return fragments
