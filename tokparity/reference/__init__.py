"""tokparity's reference tokenizers: readable, executable specifications of SPM, UGM, BPE and WPM.

``RefTokenizer(vocab)`` picks the pipeline that the file's *original* library runs, because
that is what "agree" means for it:

* a GGUF behaves as llama.cpp tokenizes it (llama.py);
* a SentencePiece ``.model`` as SentencePiece does (sentencepiece.py);
* a ``tokenizer.json`` as Hugging Face ``tokenizers`` does (hf.py);
* an RWKV World vocabulary as the ``rwkv`` package's ``TRIE_TOKENIZER`` does (rwkv.py).

Each pipeline is built from small stage modules, one per algorithm and stage:

    specials.py    partition on special / user-defined tokens (lstrip, rstrip)
    charsmap.py    the precompiled_charsmap double array
    normalize.py   SentencePiece-style normalizers (charsmap, whitespace, dummy prefix)
    unicode.py     llama.cpp's code point tables
    pretokenize.py the split regexes of every tokenizer.ggml.pre, GPT-2's byte map
    spm.py         SentencePiece BPE: merge by score
    bpe.py         byte-level BPE: merge by rank
    ugm.py         unigram: Viterbi over the lattice
    wpm.py         WordPiece: greedy longest match
    rwkv.py        RWKV World: greedy longest match over bytes, with a trie
    decode.py      ids back to bytes and text
    trace.py       the steps, readable

A vocabulary small enough to follow by hand, read as llama.cpp reads a SentencePiece-BPE GGUF
(pieces and scores, merged by score):

    >>> from tokparity.vocab.model import Flags, TokenType as T, Vocab
    >>> vocab = Vocab("spm", ["<unk>", "<s>", "▁", "a", "b", "ab"], scores=[0, 0, -1, -2, -2, -0.5],
    ...               token_types=[T.UNKNOWN, T.CONTROL] + [T.NORMAL] * 4, special_ids={"bos": 1},
    ...               flags=Flags(add_bos=True, add_space_prefix=True), source_format="gguf")
    >>> tok = RefTokenizer(vocab)
    >>> tok.encode("ab", add_special=True)      # <s>, the dummy prefix '▁', then 'ab'
    [1, 2, 5]
    >>> tok.encode("c")                         # no piece and no byte pieces for 'c': <unk>
    [2, 0]

On llama.cpp's own ``ggml-vocab-llama-spm.gguf`` (``RefTokenizer(load_vocab(path))``),
``encode("Hello world", add_special=True)`` gives ``[1, 15043, 3186]``, as llama.cpp does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tokparity.errors import TokparityError
from tokparity.reference import decode as dec
from tokparity.vocab.model import TokenType, Vocab

if TYPE_CHECKING:  # (reference.decode imports what imports this package)
    from tokparity.reference.decode import DecodeSettings

__all__ = ["RefTokenizer", "reference_of"]


class RefTokenizer:
    """One vocabulary, tokenized the way its file's original library does it."""

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self.pipeline: Any
        self._piece_bytes: dict[int, bytes] = {}  # (tokenizers: each id's decoded once; the diagnosis asks again)
        # The diagnosis' variants built on this reference, per (add_special, parse_special): a
        # Diagnoser made on it again starts from them (tokparity.diagnose.search.Kept).
        self.catalogues: dict[tuple[bool, bool], Any] = {}
        pipelines: Mapping[str, type]
        if vocab.source_format == "gguf":
            from tokparity.reference.llama import PIPELINES as pipelines
            self.flavour = "llama.cpp"
        elif vocab.source_format == "spm-model":
            from tokparity.reference.sentencepiece import PIPELINES as pipelines
            self.flavour = "sentencepiece"
        elif vocab.source_format == "rwkv-vocab":
            from tokparity.reference.rwkv import RwkvPipeline
            self.flavour = "rwkv"
            self.pipeline = RwkvPipeline(vocab)
            return
        elif vocab.source_format in ("hf-json", "tiktoken"):  # a tiktoken encoding is a BPE tokenizer.json
            from tokparity.reference.hf import pipeline_for
            self.flavour = "hf"
            self.pipeline = pipeline_for(vocab)
            return
        else:
            raise TokparityError(f"{vocab.source or 'vocabulary'}: unknown source format {vocab.source_format!r}")
        pipeline = pipelines.get(vocab.algorithm)
        if pipeline is None:
            raise TokparityError(f"{vocab.source}: the ref backend has no {vocab.algorithm!r} tokenizer for "
                                 f"{self.flavour} files (it has: {', '.join(pipelines)})")
        self.pipeline = pipeline(vocab)

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        _check_text(text)
        return self.pipeline.encode(text, add_special, parse_special)

    def decode(self, ids: list[int], errors: str = "replace", special: bool = False,
               clean_up: bool | None = None, remove_special: bool = False) -> str:
        """Text of ``ids``; ``errors="strict"`` raises ``InvalidUtf8`` instead of showing U+FFFD,
        ``"surrogateescape"`` keeps the bytes of a split character. ``special``: special tokens
        as their text (llama.cpp's unparse_special, tokenizers' skip_special_tokens=False).
        ``clean_up`` forces tokenization spaces cleaned up as transformers' clean_up_tokenization
        does, or not at all; None: as the library of the files does (llama.cpp's ``clean_spaces``
        vocabularies with its own three passes; the others never). ``remove_special``: llama.cpp's
        (its files only: ``decode_switches``)."""
        if self.flavour == "llama.cpp":
            raw = dec.llama_decode_bytes(self.pipeline, list(ids), special, None if clean_up is None else False,
                                         remove_special)
            text = dec.bytes_to_text(raw, errors)
        elif self.flavour == "sentencepiece":
            text = dec.sentencepiece_decode(self.pipeline, list(ids), errors)
        elif self.flavour == "hf":
            text = self.pipeline.decode(list(ids), errors, skip_special=not special)
        else:
            text = self.pipeline.decode(list(ids), errors)
        return dec.hf_clean_up(text) if clean_up else text

    def decode_as(self, ids: list[int], settings: DecodeSettings, errors: str = "replace") -> str:
        """``ids`` decoded as ``settings`` ask. With ``spaces_between_specials``, as vLLM's
        detokenizer (and transformers' Python tokenizers before 5) do it: the runs of ordinary
        tokens decoded apart and each added token (special or user-defined) written as its text
        as stored, a skipped special token left out before the runs are made, joined by a space,
        and the joined text cleaned up where clean-up is on."""
        if not settings.spaces_between_specials:
            return self.decode(ids, errors, not settings.skip_special, settings.clean_up, settings.remove_special)
        if settings.remove_special and self.flavour == "llama.cpp":  # (llama.cpp's BOS and EOS off first)
            flags = self.pipeline.flags
            ids = ids[1:] if flags.add_bos and ids[:1] == [flags.specials.get("bos")] else ids
            ids = ids[:-1] if flags.add_eos and ids[-1:] == [flags.specials.get("eos")] else ids
        types, specials = self.vocab.token_types, self.vocab.special_texts()
        parts: list[str] = []
        run: list[int] = []
        for i in ids:
            if settings.skip_special and i in specials:
                continue
            if i not in specials and not (types and 0 <= i < len(types) and types[i] == TokenType.USER_DEFINED):
                run.append(i)
                continue
            if run:
                parts.append(self.decode(run, errors, True, clean_up=False))
                run = []
            parts.append(self.vocab.tokens[i])  # (as vLLM writes an added token: its text as stored)
        if run:
            parts.append(self.decode(run, errors, True, clean_up=False))
        text = " ".join(parts)
        if settings.clean_up is None and self.flavour == "llama.cpp" and self.pipeline.flags.clean_spaces:
            return dec.bytes_to_text(dec.clean_up_spaces(text.encode("utf-8", "surrogateescape")), errors)
        return dec.hf_clean_up(text) if settings.clean_up else text

    def stream(self, ids: list[int], prompt: int, special: bool = False) -> list[str]:
        """``ids`` decoded one at a time after the first ``prompt``, as a server streams them
        (tokparity.reference.decode.stream_deltas): one delta per id after the prompt."""
        if self.flavour == "llama.cpp":  # the server's way: pieces, a split character held back
            return dec.piece_stream(lambda part: [dec.llama_piece(self.pipeline, i, special) for i in part],
                                    list(ids), prompt)
        if self.flavour == "sentencepiece":
            return dec.stream_deltas(lambda part, start: dec.sentencepiece_decode(self.pipeline, part, "surrogateescape",
                                                                                  start), list(ids), prompt,
                                     dec.shown_per_byte)
        # tokenizers: ByteLevel reads bytes as Rust's from_utf8_lossy does (one U+FFFD a broken sequence),
        # ByteFallback one U+FFFD a byte
        spell = dec.shown_per_byte if any(type(d).__name__ == "ByteFallback" for d in
                                          getattr(self.pipeline, "decoders", ())) else dec.shown
        return dec.stream_deltas(lambda part, start: self.decode(part, "surrogateescape", special), list(ids), prompt,
                                 spell)

    def piece_bytes(self, ids: list[int]) -> list[bytes]:
        """The bytes each id decodes to alone, special tokens as their text: llama.cpp's
        ``token_to_piece(special=True)``; the piece with ``▁`` a space and ``<0xNN>`` its byte
        (SentencePiece); what the decoder chain adds for it after another token, its bytes kept
        (tokenizers)."""
        if self.flavour == "llama.cpp":
            return dec.llama_pieces(self.pipeline, ids, special=True)
        if self.flavour == "sentencepiece":
            return [dec.spm_piece_bytes(self.vocab.tokens[i]) if 0 <= i < self.vocab.size else
                    _outside(i, self.vocab.size) for i in ids]
        # tokenizers: the decoder chain on (a, id) less its text of (a): a decoder may treat the first
        # token of a text apart (Metaspace drops its space, WordPiece keeps its '##')
        known = self._piece_bytes
        missing = [i for i in dict.fromkeys(ids) if i not in known]
        if missing:
            anchor = self.encode("a")[-1:]
            head = self.decode(anchor, "surrogateescape", special=True)
            for i in missing:
                text = self.decode(anchor + [i], "surrogateescape", special=True)
                known[i] = (text[len(head):].encode("utf-8", "surrogateescape") if text.startswith(head) else
                            self.decode([i], "surrogateescape", special=True).encode("utf-8", "surrogateescape"))
        return [known[i] for i in ids]

    def pieces(self, ids: list[int]) -> list[str]:
        tokens = self.vocab.tokens
        return [tokens[i] if 0 <= i < len(tokens) else f"<invalid id {i}>" for i in ids]

    def normalize(self, text: str) -> str:
        _check_text(text)
        return self.pipeline.normalize(text)

    def pre_tokenize(self, text: str) -> list[str]:
        _check_text(text)
        return self.pipeline.pre_tokenize(text)

    def trace(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[str]:
        from tokparity.reference.trace import trace
        _check_text(text)
        return trace(self, text, add_special, parse_special)


_KEPT: list[RefTokenizer] = []  # the last ones reference_of made, the most recently used last
REFERENCES_KEPT = 2


def reference_of(vocab: Vocab) -> RefTokenizer:
    """The RefTokenizer of ``vocab``. The last ones made are kept: a vocabulary loaded again from
    the same file (load_vocab's copies share their lists) with the same settings gets its own back.
    A process that compares one model many times builds its reference once."""
    kept = next((r for r in _KEPT if _same(r.vocab, vocab)), None)
    if kept is None:
        kept = RefTokenizer(vocab)
    else:
        _KEPT.remove(kept)
    _KEPT.append(kept)
    del _KEPT[:-REFERENCES_KEPT]
    return kept


def _same(a: Vocab, b: Vocab) -> bool:
    """Whether ``a`` and ``b`` are copies of one load: the same lists, and settings alike."""
    return (a.tokens is b.tokens and a.scores is b.scores and a.token_types is b.token_types
            and (a.merges is b.merges or not a.merges and not b.merges)  # (load_vocab's copies load them once)
            and a.algorithm == b.algorithm
            and a.pre_tokenizer == b.pre_tokenizer and a.precompiled_charsmap is b.precompiled_charsmap
            and a.source == b.source and a.source_format == b.source_format and a.flags == b.flags
            and a.special_ids == b.special_ids and a.extra.keys() == b.extra.keys()
            and all(a.extra[k] is b.extra[k] for k in a.extra))


def _outside(token_id: int, size: int) -> bytes:
    raise TokparityError(f"token id {token_id} is outside the vocabulary (0..{size - 1})")


def _check_text(text: str) -> None:
    if not isinstance(text, str):
        raise TokparityError(f"text must be a str, not {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise TokparityError(f"text holds a lone surrogate at index {e.start} ({text[e.start]!r}); "
                             "it cannot be encoded as UTF-8") from None
