"""The reference pipelines for GGUF files: what llama.cpp's ``llama_vocab::tokenize`` does.

One class per algorithm; each reads the Vocab once, then ``encode`` does what llama.cpp does:

1. partition the text on special and user-defined tokens (specials.py);
2. tokenize each text fragment with the algorithm (spm.py, bpe.py, ugm.py, wpm.py);
3. with ``add_special``, add BOS / EOS (WPM: CLS / SEP) as the model's flags say.

The flags and default special ids are llama.cpp's: its defaults per vocabulary type, then the
GGUF keys on top (``llama_vocab::impl::load``). The quirks live here, each named:

* SPM puts a space before the first fragment *and* before every fragment that follows a special
  or user-defined token (``is_prev_special``), when ``add_space_prefix`` is on.
* BPE models named ``llama-bpe`` & co. force ``add_bos`` and ``ignore_merges``; Gemma 4 forces
  ``add_bos`` even when the file says false.

Each pipeline also carries a few *switches* set to llama.cpp's behaviour (``escape_spaces``,
``prefix_every_fragment``, ``greedy``, ``byte_fallback``, ``merge_unk_runs``): they name the
places where engines are known to deviate, so that ``tokparity.diagnose`` can flip one and
reproduce an engine's bug with the reference. The switches never change the reference itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tokparity.errors import TokparityError
from tokparity.reference import bpe as bpe_mod
from tokparity.reference import rwkv as rwkv_mod
from tokparity.reference import wpm as wpm_mod
from tokparity.reference.charsmap import CharsMap
from tokparity.reference.greedy import Segmenter
from tokparity.reference.normalize import SPACE_MARK, SpNormalizer, escape_spaces
from tokparity.reference.pretokenize import Pretokenizer, bytes_to_gpt2, pre_type_for
from tokparity.reference.specials import Special, llama_specials, llama_token_types, partition
from tokparity.reference.spm import byte_piece, spm_merge
from tokparity.reference.ugm import LLAMA_CPP, UgmModel
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.rwkv_vocab import unescape_llama_rwkv

# llama.cpp's default special ids per vocabulary type, before the GGUF keys (None: no token).
DEFAULT_SPECIALS = {
    "spm": {"bos": 1, "eos": 2, "unk": 0},
    "bpe": {"bos": 11, "eos": 11},
    "ugm": {"eos": 1, "unk": 2, "pad": 0},
    "wpm": {"bos": 101, "unk": 100, "sep": 102, "pad": 0, "mask": 103},
    "rwkv": {},  # every special is LLAMA_TOKEN_NULL until the GGUF names one
}


@dataclass
class LlamaFlags:
    add_bos: bool
    add_eos: bool
    add_sep: bool
    add_space_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool = True
    treat_whitespace_as_suffix: bool = False
    clean_spaces: bool = False
    ignore_merges: bool = False
    specials: dict[str, int] = field(default_factory=dict)


def llama_flags(vocab: Vocab) -> LlamaFlags:
    """The behaviour switches llama.cpp ends up with for this GGUF."""
    algo = vocab.algorithm
    f = vocab.flags
    if algo == "spm":
        flags = LlamaFlags(add_bos=True, add_eos=False, add_sep=False, add_space_prefix=True,
                           remove_extra_whitespaces=False)
    elif algo == "bpe":
        pt = pre_type_for(_pre_name(vocab))
        flags = LlamaFlags(add_bos=bool(pt.add_bos), add_eos=False, add_sep=False, add_space_prefix=False,
                           remove_extra_whitespaces=False, escape_whitespaces=pt.escape_whitespaces,
                           clean_spaces=pt.clean_spaces, ignore_merges=pt.ignore_merges)
    elif algo == "ugm":
        flags = LlamaFlags(add_bos=False, add_eos=True, add_sep=False, add_space_prefix=False,
                           remove_extra_whitespaces=False)
    elif algo == "wpm":
        flags = LlamaFlags(add_bos=True, add_eos=False, add_sep=True, add_space_prefix=False,
                           remove_extra_whitespaces=False, clean_spaces=True)
    elif algo == "rwkv":
        flags = LlamaFlags(add_bos=False, add_eos=False, add_sep=False, add_space_prefix=False,
                           remove_extra_whitespaces=False)
    else:
        raise TokparityError(f"algorithm {algo!r} is not implemented by the ref backend")
    # The GGUF keys override the defaults.
    if f.add_space_prefix is not None:
        flags.add_space_prefix = f.add_space_prefix
    if f.remove_extra_whitespaces is not None:
        flags.remove_extra_whitespaces = f.remove_extra_whitespaces
    if f.add_bos is not None:
        flags.add_bos = f.add_bos
    if f.add_eos is not None:
        flags.add_eos = f.add_eos
    if algo == "bpe" and _pre_name(vocab) == "gemma4":
        flags.add_bos = True  # llama.cpp PR #21500: Gemma 4 always gets its BOS
    specials = dict(DEFAULT_SPECIALS[algo])
    for role, i in vocab.special_ids.items():
        if 0 <= i < vocab.size:
            specials[role] = i
    flags.specials = {r: i for r, i in specials.items() if 0 <= i < vocab.size}
    return flags


def _pre_name(vocab: Vocab) -> str | None:
    if vocab.extra.get("tokenizer.ggml.model") == "gemma4":
        return "gemma4"  # llama.cpp sets tokenizer_pre = "gemma4" for this model type
    return vocab.pre_tokenizer


class LlamaCppPipeline:
    """What every llama.cpp algorithm shares: the partition and BOS/EOS."""

    algorithm = ""

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self.flags = llama_flags(vocab)
        self.types = llama_token_types(vocab)
        self.specials: list[Special] = llama_specials(vocab, self.types)
        # text -> id over every token, as llama.cpp's token_to_id (an empty token is renamed).
        self.token_to_id = dict(zip(vocab.tokens, range(vocab.size)))  # the last id of a duplicate wins
        if "" in self.token_to_id:
            self.token_to_id = {(t if t else f"[EMPTY_{i}]"): i for i, t in enumerate(vocab.tokens)}

    # -- the public surface --------------------------------------------------------------------

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        fragments = partition(text, self.specials, parse_special)
        out: list[int] = []
        if add_special:
            out += self.prefix_ids()
        self.encode_fragments(fragments, out)
        if add_special:
            out += self.suffix_ids()
        return out

    def prefix_ids(self) -> list[int]:
        bos = self.flags.specials.get("bos")
        return [bos] if self.flags.add_bos and bos is not None else []

    def suffix_ids(self) -> list[int]:
        eos = self.flags.specials.get("eos")
        return [eos] if self.flags.add_eos and eos is not None else []

    def encode_fragments(self, fragments: list[str | int], out: list[int]) -> None:
        for frag in fragments:
            if isinstance(frag, int):
                out.append(frag)
            else:
                out += self.encode_text(frag)

    def encode_text(self, text: str) -> list[int]:
        raise NotImplementedError

    def normalize(self, text: str) -> str:
        return text

    def pre_tokenize(self, text: str) -> list[str]:
        return [text] if text else []


_WORD_START = re.compile(f"(?<=[^{SPACE_MARK}])(?={SPACE_MARK})")


class LlamaSpm(LlamaCppPipeline):
    algorithm = "spm"

    def __init__(self, vocab: Vocab, cache_chunks: bool = True):
        super().__init__(vocab)
        scores = vocab.scores or [0.0] * vocab.size
        # Any token can be formed by a merge (llama.cpp looks every text up in token_to_id).
        self.score_of = {t: scores[i] for t, i in self.token_to_id.items()}
        self.byte_ids = [self._byte_id(b) for b in range(256)]
        # Switches (llama.cpp's behaviour; tokparity.diagnose flips them to reproduce an engine):
        self.escape_spaces = True  # " " -> "▁" before merging
        self.prefix_every_fragment = True  # the dummy prefix after every special token (is_prev_special)
        self.prefix_unless_space = False  # tokenizers' Metaspace: no prefix before a leading space
        self.greedy: Segmenter | None = None  # longest vocabulary match instead of score merges
        self.byte_fallback = True  # a symbol outside the vocabulary -> <0xNN> pieces (else <unk>)
        # Fast path: when every token's "▁"s form a leading run ("▁▁the", never "a▁b"), no token
        # can span a point where a "▁" follows another character, so no pair across such a
        # point is ever queued and the merges on each side never meet: the text can be cut
        # there, each chunk ("▁the", "▁▁cat") merged alone, and its ids remembered.
        self.cache: dict[str, list[int]] | None = None
        if cache_chunks and all(SPACE_MARK not in t.lstrip(SPACE_MARK) for t in self.token_to_id):
            self.cache = {}

    def _byte_id(self, b: int) -> int | None:
        found = self.token_to_id.get(byte_piece(b))
        if found is None:  # llama.cpp then tries the byte itself as a one-byte token
            found = self.token_to_id.get(bytes([b]).decode("utf-8", "surrogateescape"))
        return found

    def encode_fragments(self, fragments: list[str | int], out: list[int]) -> None:
        prev_special = True  # "prefix with space if first token"
        for frag in fragments:
            if isinstance(frag, int):
                out.append(frag)
                prev_special = self.prefix_every_fragment
                continue
            prefix = self.flags.add_space_prefix and prev_special and not (self.prefix_unless_space
                                                                            and frag.startswith(" "))
            text = (" " if prefix else "") + frag
            out += self.encode_text(text)
            prev_special = False

    def normalize(self, text: str) -> str:
        return escape_spaces((" " if self.flags.add_space_prefix else "") + text)

    def encode_text(self, text: str, trace: list | None = None) -> list[int]:
        escaped = escape_spaces(text) if self.escape_spaces else text
        if self.cache is None or trace is not None:
            return self.encode_escaped(escaped, trace)
        out: list[int] = []
        for chunk in _WORD_START.split(escaped):
            ids = self.cache.get(chunk)
            if ids is None:
                if len(self.cache) > 100_000:
                    self.cache.clear()
                ids = self.cache[chunk] = self.encode_escaped(chunk)
            out += ids
        return out

    def encode_escaped(self, escaped: str, trace: list | None = None) -> list[int]:
        """The plain path: merge the whole (escaped) text at once, as llama.cpp does."""
        if self.greedy is not None:
            symbols = self.greedy.split(escaped)
        else:
            merged = spm_merge(list(escaped), self.score_of, trace=trace is not None)
            if trace is not None:
                trace.extend(merged.steps)
            symbols = merged.symbols
        out = []
        for symbol in symbols:
            token_id = self.token_to_id.get(symbol)
            if token_id is not None:
                out.append(token_id)
                continue
            if not self.byte_fallback:
                out.append(self.flags.specials.get("unk", 0))
                continue
            # Byte fallback: a symbol that is not a piece becomes its UTF-8 bytes.
            for b in symbol.encode("utf-8", "surrogatepass"):
                byte_id = self.byte_ids[b]
                # llama.cpp throws here (token_to_id.at); a vocabulary without byte pieces
                # gets SentencePiece's answer, the unknown token, instead.
                out.append(byte_id if byte_id is not None else self.flags.specials.get("unk", 0))
        return out


class LlamaBpe(LlamaCppPipeline):
    algorithm = "bpe"

    def __init__(self, vocab: Vocab, cache_words: bool = True):
        super().__init__(vocab)
        self.pre = pre_type_for(_pre_name(vocab))
        self.pretokenizer = Pretokenizer.for_gguf(_pre_name(vocab))
        merges = vocab.merges
        # pair -> rank; built from the end so a duplicated pair keeps its first (lowest) rank
        self.ranks = dict(zip(reversed(merges), range(len(merges) - 1, -1, -1)))
        self.gemma4 = _pre_name(vocab) == "gemma4"
        self.greedy: Segmenter | None = None  # switch: longest vocabulary match (or backtracking) instead of merges
        # Switch: where a whole word is looked up (ignore_merges). llama.cpp looks in every token,
        # control tokens too; no split regex of its table ever leaves "<|eot_id|>" whole, but a
        # diagnosis that drops the split must look where an engine without one does (tokenizers'
        # model vocabulary, which holds no added special token).
        self.whole_words: dict[str, int] = self.token_to_id
        # Fast path: a word's ids depend on the word alone, so they can be remembered.
        self.cache: dict[str, list[int]] | None = {} if cache_words else None

    def normalize(self, text: str) -> str:
        return escape_spaces(text) if self.flags.escape_whitespaces else text

    def pre_tokenize(self, text: str) -> list[str]:
        words = self.pretokenizer.split(self.normalize(text))
        return [bytes_to_gpt2(w) for w in words] if self.pre.byte_encode else words

    def encode_text(self, text: str) -> list[int]:
        out: list[int] = []
        cache = self.cache
        for word in self.pretokenizer.split(self.normalize(text)):
            if cache is not None:
                ids = cache.get(word)
                if ids is None:
                    ids = self.encode_word(word)
                    if len(cache) > 100_000:
                        cache.clear()
                    cache[word] = ids
                out += ids
            else:
                out += self.encode_word(word)
        return out

    def encode_word(self, word: str, trace: list | None = None) -> list[int]:
        symbols_text = bytes_to_gpt2(word) if self.pre.byte_encode else word
        whole = self.whole_words.get(symbols_text)
        if whole is not None and (self.flags.ignore_merges or (self.gemma4 and not word.strip("\n"))):
            return [whole]
        if self.greedy is not None:
            symbols = self.greedy.split(symbols_text)
        elif trace is not None and len(word) <= bpe_mod.TRACED_WORD:
            result = bpe_mod.merge_word(list(symbols_text), self.ranks, trace=True)
            trace.extend(result.steps)
            symbols = result.symbols
        else:
            symbols = bpe_mod.merge_word_heap(list(symbols_text), self.ranks)
        out = []
        for symbol in symbols:
            token_id = self.token_to_id.get(symbol)
            if token_id is not None:
                out.append(token_id)
                continue
            # A symbol with no id: one token per byte of its (UTF-8) text, if there is one.
            for b in symbol.encode("utf-8"):
                key = byte_piece(b) if not self.pre.byte_encode else bytes([b]).decode("utf-8", "surrogateescape")
                byte_id = self.token_to_id.get(key)
                if byte_id is not None:
                    out.append(byte_id)
        return out


class LlamaUgm(LlamaCppPipeline):
    algorithm = "ugm"

    def __init__(self, vocab: Vocab):
        super().__init__(vocab)
        types = vocab.token_types or [TokenType.NORMAL] * vocab.size
        charsmap = CharsMap(vocab.precompiled_charsmap, f"{vocab.source}: precompiled_charsmap") \
            if vocab.precompiled_charsmap else None
        user_defined = [t for t, ty in zip(vocab.tokens, types) if ty == TokenType.USER_DEFINED]
        self.normalizer = SpNormalizer(charsmap, user_defined, add_space_prefix=self.flags.add_space_prefix,
                                       remove_extra_whitespaces=self.flags.remove_extra_whitespaces,
                                       escape_whitespaces=self.flags.escape_whitespaces,
                                       treat_whitespace_as_suffix=self.flags.treat_whitespace_as_suffix,
                                       flavour="llama.cpp")
        self._types = types
        self._model: UgmModel | None = None
        # Switches (llama.cpp's behaviour; tokparity.diagnose flips them to reproduce an engine):
        self.greedy: Segmenter | None = None  # longest vocabulary match instead of Viterbi
        self.merge_unk_runs = True  # one <unk> per run of unknown code points
        self.byte_fallback = False  # llama.cpp's UGM writes <unk>, never <0xNN> pieces

    @property
    def model(self) -> UgmModel:
        if self._model is None:  # the prefix set of a 250k vocabulary takes a moment: build on use
            self._model = UgmModel.build(self.vocab.tokens, self._types, self.vocab.scores or [0.0] * self.vocab.size,
                                         self.flags.specials.get("unk", 0), LLAMA_CPP)
        return self._model

    def normalize(self, text: str) -> str:
        return self.normalizer.normalize(text)

    def segment(self, normalized: str) -> list[tuple[int, str]]:
        if self.greedy is None:
            return self.model.encode(normalized)
        pieces = self.model.pieces
        return [(pieces[p][0] if p in pieces else self.model.unk_id, p) for p in self.greedy.split(normalized)]

    def encode_text(self, text: str) -> list[int]:
        unk = self.model.unk_id
        out: list[int] = []
        for token_id, piece in self.segment(self.normalizer.normalize(text)):
            if token_id == unk and self.byte_fallback and self._has_byte_pieces(piece):
                out += [self.token_to_id[byte_piece(b)] for b in piece.encode("utf-8", "surrogatepass")]
                continue
            if token_id == unk and self.merge_unk_runs and out and out[-1] == unk:
                continue  # one <unk> per run of unknown code points
            out.append(token_id)
        return out

    def _has_byte_pieces(self, piece: str) -> bool:
        return all(byte_piece(b) in self.token_to_id for b in piece.encode("utf-8", "surrogatepass"))


class LlamaWpm(LlamaCppPipeline):
    algorithm = "wpm"

    def __init__(self, vocab: Vocab):
        super().__init__(vocab)
        extra = vocab.extra
        self.lowercase = bool(extra.get("tokenizer.ggml.normalizer.lowercase", True))
        self.strip_accents = bool(extra.get("tokenizer.ggml.normalizer.strip_accents", self.lowercase))
        self.max_len = max(len(t) for t in vocab.tokens)
        # Set by a diagnosis's variants: characters read otherwise (wpm.CLASSES), and whether the
        # text is read as BERT's own tokenizer reads it (wpm.bert_reading), where llama.cpp departs.
        self.classes: dict[str, str] = {}
        self.bert = False
        self.empty_words = False  # each space ends a word: an empty word is one [UNK] (a port's split(' '))

    def prefix_ids(self) -> list[int]:
        bos = self.flags.specials.get("bos")
        return [bos] if bos is not None else []

    def suffix_ids(self) -> list[int]:
        sep = self.flags.specials.get("sep")
        return [sep] if sep is not None else []

    def pre_tokenize(self, text: str) -> list[str]:
        return wpm_mod.preprocess(text, self.lowercase, self.strip_accents, self._classes(text), self.empty_words)

    def _classes(self, text: str) -> dict[str, str]:
        if not self.bert:
            return self.classes
        bert = {ch: how for ch in set(text) if (how := wpm_mod.bert_reading(ch, self.lowercase, self.strip_accents))}
        return {**bert, **self.classes}

    def encode_text(self, text: str) -> list[int]:
        out: list[int] = []
        unk = self.flags.specials.get("unk", 100)
        for word in self.pre_tokenize(text):
            out += wpm_mod.wordpiece(word, self.token_to_id, self.max_len, unk) if word else [unk]
        return out


class LlamaRwkv(LlamaCppPipeline):
    """``llm_tokenizer_rwkv``: greedy longest match over bytes (reference/rwkv.py), with llama.cpp's
    two edges: the trie holds every token of the GGUF, control and unused ones too (so ``"<s>"``
    in a text is id 0 of an RWKV World GGUF, as one token), and a byte that no token starts with
    becomes the unk id (-1, LLAMA_TOKEN_NULL, when the GGUF names none)."""

    algorithm = "rwkv"

    def __init__(self, vocab: Vocab):
        super().__init__(vocab)
        self.trie = rwkv_mod.ByteTrie((unescape_llama_rwkv(t.encode("utf-8", "surrogateescape")), i)
                                      for i, t in enumerate(vocab.tokens))

    def encode_text(self, text: str) -> list[int]:
        return self.trie.split(text.encode("utf-8"), self._no_match)

    def _no_match(self, data: bytes, pos: int) -> tuple[list[int], int]:
        if data[pos] in self.trie.root:
            # Tokens start with this byte but none of them matches: llama.cpp then emits id 0 and
            # goes back to the start of the text, for ever (no RWKV World GGUF can get here).
            raise TokparityError(f"no token matches at byte {pos}, though some start with 0x{data[pos]:02x}; "
                                 "llama.cpp's RWKV tokenizer loops for ever here")
        return [self.flags.specials.get("unk", -1)], pos + 1


PIPELINES = {"spm": LlamaSpm, "bpe": LlamaBpe, "ugm": LlamaUgm, "wpm": LlamaWpm, "rwkv": LlamaRwkv}

__all__ = ["PIPELINES", "LlamaBpe", "LlamaRwkv", "LlamaSpm", "LlamaUgm", "LlamaWpm", "llama_flags", "SPACE_MARK"]
