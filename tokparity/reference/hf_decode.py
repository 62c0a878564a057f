"""tokenizers' decoders: ids -> token strings -> text, with ``skip_special_tokens``.

Each decoder maps the list of token strings to a new list (``decode_chain``), in order; the text
is the concatenation. With no decoder tokenizers joins the tokens with spaces. ``ByteLevel``
and ``ByteFallback`` make bytes, decoded here with the caller's ``errors``.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import groupby

from tokparity.components import decoders as d
from tokparity.reference.decode import bytes_to_text
from tokparity.reference.hf_regex import TimedRegex
from tokparity.vocab.token_bytes import gpt2_unicode_to_byte


def wordpiece_cleanup(text: str) -> str:
    """tokenizers' ``wordpiece::cleanup``: the spaces WordPiece put before punctuation and clitics."""
    for dirty, clean in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                         (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        text = text.replace(dirty, clean)
    return text


def _byte_fallback(tokens: list[str], errors: str) -> list[str]:
    out: list[str] = []
    pending = bytearray()

    def flush() -> None:
        if pending:
            try:
                out.append(bytes(pending).decode("utf-8"))
            except UnicodeDecodeError:
                if errors == "strict":
                    bytes_to_text(bytes(pending), "strict")  # raises, naming the bytes
                if errors == "surrogateescape":  # the bytes kept (a streaming decoder holds them back)
                    out.append(bytes(pending).decode("utf-8", "surrogateescape"))
                else:
                    out.extend("\ufffd" * len(pending))
            pending.clear()

    for t in tokens:
        if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            try:
                pending.append(int(t[3:5], 16))
                continue
            except ValueError:
                pass
        flush()
        out.append(t)
    flush()
    return out


def _strip(c: d.Strip, t: str) -> str:
    start = 0
    while start < min(c.start, len(t)) and t[start] == c.content:
        start += 1
    stop = len(t)
    for _ in range(c.stop):
        if stop > start and t[stop - 1] == c.content:
            stop -= 1
        else:
            break
    return t[start:stop]


@lru_cache(maxsize=64)
def _replace(pattern: str, is_regex: bool, path: str) -> TimedRegex:
    """A decoder Replace's regex, compiled once: a diagnosis decodes thousands of id lists."""
    return TimedRegex(pattern, is_regex, "decoder Replace", path)


def chain(c, tokens: list[str], errors: str, path: str) -> list[str]:
    if isinstance(c, d.ByteLevel):
        # A token with a character outside the byte alphabet (an added token such as DeepSeek's
        # '<｜begin▁of▁sentence｜>') is taken as its own UTF-8, whole (tokenizers' ByteLevel::decode_chain).
        table = gpt2_unicode_to_byte()
        data = bytearray()
        for t in tokens:
            if all(ch in table for ch in t):
                data += bytes(table[ch] for ch in t)
            else:
                data += t.encode("utf-8", "surrogatepass")
        return [bytes_to_text(bytes(data), errors)]
    if isinstance(c, d.ByteFallback):
        return _byte_fallback(tokens, errors)
    if isinstance(c, d.Fuse):
        return ["".join(tokens)]
    if isinstance(c, d.Metaspace):
        keep_first = c.prepend_scheme == "never"
        return [t.replace(c.replacement, "" if i == 0 and not keep_first else " ") for i, t in enumerate(tokens)]
    if isinstance(c, d.WordPiece):
        out = []
        for i, t in enumerate(tokens):
            if i:
                t = t[len(c.prefix):] if t.startswith(c.prefix) else " " + t
            out.append(wordpiece_cleanup(t) if c.cleanup else t)
        return out
    if isinstance(c, d.BPEDecoder):
        return [t.replace(c.suffix, "" if i == len(tokens) - 1 else " ") for i, t in enumerate(tokens)]
    if isinstance(c, d.Strip):
        return [_strip(c, t) for t in tokens]
    if isinstance(c, d.Replace):
        rx = _replace(c.pattern, c.is_regex, path)
        return [rx.sub(c.content, t) for t in tokens]
    if isinstance(c, d.CTC):
        out = []
        for t, _ in groupby(tokens):
            t = t.replace(c.pad_token, "")
            if c.cleanup:
                t = wordpiece_cleanup(t).replace(c.word_delimiter_token, " ")
            if t:
                out.append(t)
        return out
    raise TypeError(f"not a decoder step: {c!r}")


def decode(pipeline, ids: list[int], errors: str = "replace", skip_special: bool = True) -> str:
    """``Tokenizer.decode(ids, skip_special_tokens=skip_special)``: the special added tokens are
    left out, or decoded as the other tokens are (through the decoder chain)."""
    tokens = [pipeline.tokens[i] for i in ids
              if 0 <= i < len(pipeline.tokens) and not (skip_special and i in pipeline.special_ids)]
    if not pipeline.decoders:
        return " ".join(tokens)
    path = pipeline.vocab.source or "tokenizer.json"
    for c in pipeline.decoders:
        tokens = chain(c, tokens, errors, path)
    return "".join(tokens)
