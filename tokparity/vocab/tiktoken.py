"""tiktoken encodings -> ``Vocab``.

A tiktoken encoding is a list of byte strings by rank, a split regex (``pat_str``) and special
tokens. The rank list is shipped in three shapes, all read here:

* a plain rank file (``gpt2.tiktoken``, ``multilingual.tiktoken`` in openai-whisper): one
  ``<base64 bytes> <rank>`` line per token. It holds neither the regex nor the specials; the
  packages that ship such files use GPT-2's regex and put ``<|endoftext|>`` right after the last
  rank (openai-whisper's tokenizer.py), which is what this loader assumes, and says so in
  ``vocab.extra["tiktoken"]["assumed"]``;
* an encoder JSON of @dqbd/tiktoken and js-tiktoken (``encoders/p50k_base.json``): ``pat_str``,
  ``special_tokens`` and ``bpe_ranks``, the ranks as lines ``<first> <offset> <b64> <b64> ...``
  (the i-th base64 token of a line has rank offset + i);
* a Mistral "tekken" JSON (mistral-common's ``tekken_*.json``): ``config.pattern``, ``vocab``
  (``rank``/``token_bytes``) and special tokens that take the first ``default_num_special_tokens``
  ids, so a rank r is id r + that number; only ``default_vocab_size`` ids are used. Tekken never
  reads a special token's text in the input (mistral-common encodes with specials disallowed).

The Vocab is the byte-level BPE that encoding is (what transformers' TikTokenConverter builds):
tokens as GPT-2 byte-to-unicode strings, merges derived from the ranks (every split of a token
into two tokens, ordered by the token's rank), ``ignore_merges`` (tiktoken takes a piece that is
itself a token whole), a Split(pattern) + ByteLevel pre-tokenizer. The tokenizer.json-shaped
stages in ``extra`` let the reference run it as the tokenizer.json it is equivalent to.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tokparity.errors import BadModelFile
from tokparity.vocab.model import Flags, TokenType, Vocab
from tokparity.vocab.token_bytes import byte_to_unicode

# GPT-2's (r50k_base's) split regex: what openai-whisper passes with its rank files.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
ENDOFTEXT = "<|endoftext|>"
_RANK_LINE = re.compile(rb"[A-Za-z0-9+/=]+ \d+\r?\n")


@dataclass
class Encoding:
    """One tiktoken encoding as the files give it."""

    kind: str  # rank-file | js-encoder | tekken
    pattern: str
    ranks: dict[int, bytes]  # rank -> bytes (p50k_base leaves a gap where its special token sits)
    specials: dict[str, int]  # text -> id, for specials read from the input text
    offset: int = 0  # id of rank 0 (tekken: its number of special tokens)
    reserved: list[str] | None = None  # tekken's special tokens, ids 0..offset-1, never read from text
    assumed: str = ""  # what the file does not say and the loader assumed

    @property
    def size(self) -> int:
        return max([self.offset + max(self.ranks) + 1, *(i + 1 for i in self.specials.values())])


def looks_like_tiktoken(head: bytes) -> bool:
    """Whether the first bytes of a file are a tiktoken encoding (any of the three shapes)."""
    if head.lstrip()[:1] == b"{":
        return b'"bpe_ranks"' in head or b'"pat_str"' in head or b'"default_num_special_tokens"' in head
    return _RANK_LINE.match(head) is not None


def _b64(path: Path, where: str, text: str) -> bytes:
    # Not validated, as tiktoken's own loader: multilingual.tiktoken's rank 50256 is "=", the empty string.
    if not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text):
        raise BadModelFile(path, f"{where}: {text[:40]!r} is not base64")
    try:
        return base64.b64decode(text)
    except (binascii.Error, ValueError):
        raise BadModelFile(path, f"{where}: {text[:40]!r} is not base64") from None


# The longest token a tiktoken encoding may hold (the real ones: 128 bytes and under). Each token's
# splits are tried when its merges are derived: a 2 MB token would take hours.
MAX_TOKEN_BYTES = 4096


def _ordered(path: Path, by_rank: dict[int, bytes]) -> dict[int, bytes]:
    if not by_rank:
        raise BadModelFile(path, "holds no tokens")
    if max(by_rank) > _id_bound(len(by_rank)):
        raise BadModelFile(path, f"ranks go up to {max(by_rank)} for only {len(by_rank)} tokens; the file is corrupt")
    longest = max(by_rank, key=lambda r: len(by_rank[r]))
    if len(by_rank[longest]) > MAX_TOKEN_BYTES:
        raise BadModelFile(path, f"the token of rank {longest} is {len(by_rank[longest]):,} bytes long (tiktoken "
                                 f"tokens are at most a few hundred); the file is corrupt")
    if len(set(by_rank.values())) != len(by_rank):
        raise BadModelFile(path, "two ranks hold the same bytes; not a tiktoken encoding")
    return dict(sorted(by_rank.items()))


def _rank_file(path: Path, data: bytes) -> Encoding:
    by_rank: dict[int, bytes] = {}
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not (parts[1].isascii() and parts[1].isdigit()):
            raise BadModelFile(path, f"line {n} is not '<base64> <rank>'; not a tiktoken rank file")
        by_rank[int(parts[1])] = _b64(path, f"line {n}", parts[0].decode("ascii", "replace"))
    ranks = _ordered(path, by_rank)
    return Encoding("rank-file", GPT2_PATTERN, ranks, {ENDOFTEXT: max(ranks) + 1},
                    assumed="a rank file holds no regex and no specials: GPT-2's regex and <|endoftext|> after the "
                            "last rank, as openai-whisper uses them")


def _js_encoder(path: Path, data: dict) -> Encoding:
    pattern, specials, text = data.get("pat_str"), data.get("special_tokens", {}), data.get("bpe_ranks")
    if not isinstance(pattern, str) or not isinstance(text, str) or not isinstance(specials, dict):
        raise BadModelFile(path, "a tiktoken encoder JSON needs pat_str (a string), bpe_ranks (a string) and "
                                 "special_tokens (an object)")
    by_rank: dict[int, bytes] = {}
    for n, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        _, offset, *tokens = line.split(" ")
        if not (offset.isascii() and offset.isdigit()):
            raise BadModelFile(path, f"bpe_ranks line {n}: offset {offset[:20]!r} is not a number")
        for i, token in enumerate(tokens):
            by_rank[int(offset) + i] = _b64(path, f"bpe_ranks line {n}", token)
    if not all(isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in specials.items()):
        raise BadModelFile(path, "special_tokens must map text to non-negative ids")
    ranks = _ordered(path, by_rank)
    if specials and max(specials.values()) > _id_bound(len(ranks)):
        raise BadModelFile(path, f"special_tokens has the id {max(specials.values())} for only {len(ranks)} tokens; "
                                 "the file is corrupt")
    return Encoding("js-encoder", pattern, ranks, dict(specials))


def _id_bound(tokens: int) -> int:
    """The largest id a file of ``tokens`` tokens may use (gaps allowed; an id of 10**10 would make a
    table of that many entries)."""
    return 16 * tokens + 1024


def _tekken(path: Path, data: dict) -> Encoding:
    config, entries = data.get("config"), data.get("vocab")
    if not isinstance(config, dict) or not isinstance(entries, list):
        raise BadModelFile(path, "a tekken file needs 'config' (an object) and 'vocab' (a list)")
    pattern, n_special, size = (config.get(k) for k in ("pattern", "default_num_special_tokens",
                                                         "default_vocab_size"))
    if not (isinstance(pattern, str) and isinstance(n_special, int) and isinstance(size, int) and size > n_special):
        raise BadModelFile(path, "config needs pattern, default_num_special_tokens and default_vocab_size")
    if not 0 <= n_special <= _id_bound(len(entries)):
        raise BadModelFile(path, f"config's default_num_special_tokens is {n_special} for {len(entries)} tokens; the "
                                 "file is corrupt")
    by_rank: dict[int, bytes] = {}
    for i, e in enumerate(entries[:size - n_special]):
        if not (isinstance(e, dict) and isinstance(e.get("rank"), int) and isinstance(e.get("token_bytes"), str)):
            raise BadModelFile(path, f"vocab[{i}] needs an int 'rank' and a base64 'token_bytes'")
        by_rank[e["rank"]] = _b64(path, f"vocab[{i}]", e["token_bytes"])
    reserved = [f"<SPECIAL_{i}>" for i in range(n_special)]
    listed = data.get("special_tokens")
    if isinstance(listed, list):
        for s in listed:
            if isinstance(s, dict) and isinstance(s.get("rank"), int) and isinstance(s.get("token_str"), str) \
                    and 0 <= s["rank"] < n_special:
                reserved[s["rank"]] = s["token_str"]
        assumed = ""
    else:  # older files: mistral-common's Tekkenizer.DEPRECATED_SPECIAL_TOKENS, in that order
        for i, s in enumerate(TEKKEN_DEPRECATED_SPECIALS):
            reserved[i] = s
        assumed = "no special_tokens list: mistral-common's deprecated default list for its first ids"
    return Encoding("tekken", pattern, _ordered(path, by_rank), {}, offset=n_special, reserved=reserved,
                    assumed=assumed)


def _tekken_bos(tokens: list[str], special_ids: dict[str, int]) -> dict | None:
    """``<s> $A``: mistral-common's Tekkenizer puts the BOS first when asked for special tokens
    (``encode(bos=True)``), as the tokenizer.json of Mistral's tekken models does."""
    if "bos" not in special_ids:
        return None
    bos = tokens[special_ids["bos"]]
    first = {"SpecialToken": {"id": bos, "type_id": 0}}
    return {"type": "TemplateProcessing", "single": [first, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [first, {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [special_ids["bos"]], "tokens": [bos]}}}


TEKKEN_DEPRECATED_SPECIALS = ("<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                              "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
                              "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
                              "[TOOL_CONTENT]")


def read_encoding(path: str | os.PathLike) -> Encoding:
    """The encoding in a tiktoken file of any of the three shapes."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise BadModelFile(path, f"cannot read it ({e.strerror or e})") from None
    if raw.lstrip()[:1] != b"{":
        return _rank_file(path, raw)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as e:
        raise BadModelFile(path, f"invalid JSON ({str(e)[:80]})") from None
    if not isinstance(data, dict):
        raise BadModelFile(path, "top level is not a JSON object; not a tiktoken encoding")
    if "bpe_ranks" in data:
        return _js_encoder(path, data)
    if "config" in data and "vocab" in data:
        return _tekken(path, data)
    raise BadModelFile(path, "a JSON with neither bpe_ranks (js-tiktoken) nor config+vocab (tekken); "
                             "not a tiktoken encoding")


def _derive_merges(ranks: dict[int, bytes], to_text: list[str]) -> list[tuple[str, str]]:
    """tiktoken merges the adjacent pair whose concatenation has the lowest rank. As BPE merges:
    every split of a token into two tokens, in the token's rank order (transformers'
    TikTokenConverter.extract_vocab_merges_from_model does the same)."""
    rank_of = {b: r for r, b in ranks.items()}

    def text(b: bytes) -> str:
        return "".join(to_text[x] for x in b)

    merges: list[tuple[str, str]] = []
    for token in ranks.values():
        splits = [(rank_of[token[:i]], rank_of[token[i:]], i) for i in range(1, len(token))
                  if token[:i] in rank_of and token[i:] in rank_of]
        for _, _, i in sorted(splits):
            merges.append((text(token[:i]), text(token[i:])))
    return merges


def load_tiktoken(path: str | os.PathLike) -> Vocab:
    from tokparity.components import parse_tokenizer_json

    enc = read_encoding(path)
    to_text = byte_to_unicode()
    size = enc.size
    texts: list[str | None] = [None] * size
    types = [TokenType.UNUSED] * size
    for r, b in enc.ranks.items():
        texts[enc.offset + r] = "".join(to_text[x] for x in b)
        types[enc.offset + r] = TokenType.NORMAL
    for i, name in enumerate(enc.reserved or []):
        texts[i], types[i] = name, TokenType.CONTROL
    for name, i in enc.specials.items():
        texts[i], types[i] = name, TokenType.CONTROL
    tokens = [t if t is not None else f"[PAD{i}]" for i, t in enumerate(texts)]
    special_ids = {}
    if ENDOFTEXT in enc.specials:
        special_ids["eos"] = enc.specials[ENDOFTEXT]
    if enc.reserved:
        special_ids.update({role: enc.reserved.index(name) for role, name in (("unk", "<unk>"), ("bos", "<s>"),
                                                                               ("eos", "</s>"))
                            if name in enc.reserved})
    # The tokenizer.json this encoding is: specials are added tokens (read from the text when
    # specials are parsed); tekken's reserved ids are not, as mistral-common never reads them.
    added = [{"id": i, "content": name, "special": True, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False} for name, i in sorted(enc.specials.items(), key=lambda kv: kv[1])]
    model: dict[str, object] = {"type": "BPE", "ignore_merges": True, "byte_fallback": False, "fuse_unk": False}
    pipeline: dict[str, object] = {
        "model": model,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": enc.pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": _tekken_bos(tokens, special_ids) if enc.kind == "tekken" else None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "added_tokens": added,
    }
    merges = _derive_merges(enc.ranks, to_text)
    with_model = {**pipeline, "model": {**model, "merges": [list(m) for m in merges],
                                        "vocab": {tokens[enc.offset + r]: enc.offset + r for r in enc.ranks}}}
    vocab = Vocab(
        algorithm="bpe",
        tokens=tokens,
        token_types=[int(t) for t in types],
        special_ids=special_ids,
        # (tekken: mistral-common's Tekkenizer puts <s> first when asked for special tokens, encode(bos=True))
        flags=Flags(add_bos="bos" in special_ids and enc.kind == "tekken", add_eos=False, add_space_prefix=False,
                    byte_fallback=False),
        source=str(path),
        source_format="tiktoken",
        extra={
            "model_type": "BPE",
            "spec": parse_tokenizer_json(with_model, Path(path)),  # the typed pipeline the reference reads
            **pipeline,
            "tiktoken": {"kind": enc.kind, "pattern": enc.pattern, "offset": enc.offset, "assumed": enc.assumed,
                         "specials": dict(enc.specials)},
        },
    )
    vocab.set_merges(merges)
    return vocab
