"""The reference pipelines for SentencePiece ``.model`` files: ``SentencePieceProcessor.encode``.

1. Normalize (normalize.py, ``flavour="sentencepiece"``): user-defined pieces kept whole, the
   ``precompiled_charsmap``, leading/trailing/duplicate spaces removed, the dummy prefix,
   spaces escaped to ``▁``.
2. Segment: unigram Viterbi in float32 (ugm.py) or BPE by piece score (spm.py), user-defined
   pieces frozen, UNUSED pieces resegmented into the two symbols they were merged from.
3. Report (``PopulateSentencePieceText``): a run of unknown pieces becomes one ``<unk>``, or,
   with ``byte_fallback``, each unknown piece becomes its UTF-8 bytes as ``<0xNN>`` pieces.

SentencePiece neither adds BOS/EOS (unless asked: ``add_bos``/``add_eos`` are encode options,
and a ``.model`` does not say) nor parses control-token text in the input: ``"<s>"`` is text.
"""

from __future__ import annotations

from tokparity.reference.charsmap import CharsMap
from tokparity.reference.greedy import Segmenter
from tokparity.reference.normalize import SpNormalizer
from tokparity.reference.specials import Special
from tokparity.reference.spm import byte_piece, spm_merge
from tokparity.reference.ugm import SENTENCEPIECE, UgmModel
from tokparity.vocab.model import TokenType, Vocab

MERGEABLE = (TokenType.NORMAL, TokenType.USER_DEFINED, TokenType.UNUSED)


class SentencePiecePipeline:
    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self.types = vocab.token_types or [TokenType.NORMAL] * vocab.size
        self.token_to_id = vocab.token_to_id()
        self.unk_id = vocab.special_ids.get("unk", 0)
        f = vocab.flags
        charsmap = CharsMap(vocab.precompiled_charsmap, f"{vocab.source}: precompiled_charsmap") \
            if vocab.precompiled_charsmap else None
        self.user_defined = [t for t, ty in zip(vocab.tokens, self.types) if ty == TokenType.USER_DEFINED]
        self.normalizer = SpNormalizer(
            charsmap, self.user_defined, add_space_prefix=f.add_space_prefix is not False,
            remove_extra_whitespaces=f.remove_extra_whitespaces is not False,
            escape_whitespaces=f.escape_whitespaces is not False,
            treat_whitespace_as_suffix=bool(f.treat_whitespace_as_suffix), flavour="sentencepiece")
        self.byte_fallback = bool(f.byte_fallback)
        self.specials: list[Special] = []  # SentencePiece never parses special-token text
        # Switches (SentencePiece's behaviour; tokparity.diagnose flips them to reproduce an engine):
        self.merge_unk_runs = True  # one <unk> per run of unknown pieces
        self.greedy: Segmenter | None = None  # longest vocabulary match instead of the model
        # The specials cut out of the raw text first, each part normalized apart: "" (no), "each"
        # (every part gets the dummy prefix) or "first" (only a part at the start of the text gets it)
        self.cut_before_normalizing = ""

    def normalize(self, text: str) -> str:
        return self.normalizer.normalize(text)

    def pre_tokenize(self, text: str) -> list[str]:
        normalized = self.normalize(text)
        return [normalized] if normalized else []

    def prefix_ids(self) -> list[int]:
        bos = self.vocab.special_ids.get("bos")
        return [bos] if self.vocab.flags.add_bos and bos is not None else []

    def suffix_ids(self) -> list[int]:
        eos = self.vocab.special_ids.get("eos")
        return [eos] if self.vocab.flags.add_eos and eos is not None else []

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        if self.specials and self.cut_before_normalizing:
            pieces = self.segment_between_specials(text, parse_special)
        elif self.specials:
            pieces = self.segment_around_specials(self.normalize(text), parse_special)
        else:
            pieces = self.segment_text(self.normalize(text))
        out = self.prefix_ids() if add_special else []
        out += self.report(pieces)
        if add_special:
            out += self.suffix_ids()
        return out

    def segment(self, normalized: str) -> list[tuple[int, str]]:
        raise NotImplementedError

    def segment_around_specials(self, normalized: str, parse_special: bool) -> list[tuple[int, str]]:
        """Only when a diagnosis gives this pipeline ``specials``: the normalized text cut on
        their texts (a ``parse_only`` one only with ``parse_special``), the rest segmented (what
        tokenizers does with added tokens marked ``normalized``, which SentencePiece itself never
        does)."""
        from tokparity.reference.specials import partition
        out: list[tuple[int, str]] = []
        for frag in partition(normalized, self.specials, parse_special):
            if isinstance(frag, int):
                out.append((frag, self.vocab.tokens[frag]))
            else:
                out += self.segment_text(frag)
        return out

    def segment_between_specials(self, text: str, parse_special: bool) -> list[tuple[int, str]]:
        """Only when a diagnosis asks for it: the raw text cut on the specials' texts, and each part
        between them normalized on its own. The cut comes first, as in tokenizers for added tokens
        not marked ``normalized``. With "each", every part gets the dummy prefix. With "first",
        only a part that starts the text gets it: tokenizers' Metaspace with prepend_scheme
        "first" prefixes only the split at offset 0, so none after a leading special."""
        from tokparity.reference.specials import partition
        out: list[tuple[int, str]] = []
        later = self.normalizer.replaced(add_space_prefix=False) if self.cut_before_normalizing == "first" else None
        at_start = True
        for frag in partition(text, self.specials, parse_special):
            if isinstance(frag, int):
                out.append((frag, self.vocab.tokens[frag]))
            elif frag:
                out += self.segment_text(self.normalize(frag) if at_start or later is None else later.normalize(frag))
            at_start = at_start and frag == ""
        return out

    def segment_text(self, normalized: str) -> list[tuple[int, str]]:
        """``normalized`` segmented by the model, or by longest match where the switch says so."""
        return self.segment(normalized) if self.greedy is None else self.greedy_segment(normalized)

    def greedy_segment(self, normalized: str) -> list[tuple[int, str]]:
        assert self.greedy is not None
        ids = self.token_to_id
        return [(ids.get(p, self.unk_id), p) for p in self.greedy.split(normalized)]

    def report(self, pieces: list[tuple[int, str]]) -> list[int]:
        """Unknown runs -> one unk id; or, with byte fallback, unknown pieces -> byte ids."""
        ids = [token_id for token_id, _ in pieces]
        if self.unk_id not in ids:
            return ids  # the common case: nothing unknown to merge or spell out
        out: list[int] = []
        prev_unk = False
        for token_id, text in pieces:
            is_unk = token_id == self.unk_id
            if is_unk and self.byte_fallback:
                out += [self.token_to_id[byte_piece(b)] for b in text.encode("utf-8", "surrogatepass")]
            elif not (is_unk and prev_unk and self.merge_unk_runs):
                out.append(token_id)
            prev_unk = is_unk
        return out


class SentencePieceUnigram(SentencePiecePipeline):
    algorithm = "ugm"

    def __init__(self, vocab: Vocab):
        super().__init__(vocab)
        self.model = UgmModel.build(vocab.tokens, self.types, vocab.scores or [0.0] * vocab.size, self.unk_id,
                                    SENTENCEPIECE)

    def segment(self, normalized: str) -> list[tuple[int, str]]:
        return self.model.encode(normalized)


class SentencePieceBpe(SentencePiecePipeline):
    algorithm = "spm"

    def __init__(self, vocab: Vocab):
        super().__init__(vocab)
        scores = vocab.scores or [0.0] * vocab.size
        self.score_of = {t: scores[i] for t, i in self.token_to_id.items() if self.types[i] in MERGEABLE}
        self.user_sorted = sorted(self.user_defined, key=len, reverse=True)

    def initial_symbols(self, text: str) -> tuple[list[str], set[int]]:
        """One symbol per code point, except user-defined pieces, which are one frozen symbol."""
        symbols: list[str] = []
        frozen: set[int] = set()
        i = 0
        while i < len(text):
            for piece in self.user_sorted:
                if text.startswith(piece, i):
                    frozen.add(len(symbols))
                    symbols.append(piece)
                    i += len(piece)
                    break
            else:
                symbols.append(text[i])
                i += 1
        return symbols, frozen

    def segment(self, normalized: str, trace: list | None = None) -> list[tuple[int, str]]:
        symbols, frozen = self.initial_symbols(normalized)
        merged = spm_merge(symbols, self.score_of, frozen, trace=trace is not None)
        if trace is not None:
            trace.extend(merged.steps)
        out: list[tuple[int, str]] = []

        def resegment(piece: str, depth: int = 0) -> None:
            token_id = self.token_to_id.get(piece)
            if token_id is None or self.types[token_id] not in MERGEABLE:
                out.append((self.unk_id, piece))
            elif self.types[token_id] != TokenType.UNUSED or depth > 100:
                out.append((token_id, piece))
            elif piece in merged.rev_merge:  # an UNUSED piece: undo the merge that made it
                left, right = merged.rev_merge[piece]
                resegment(left, depth + 1)
                resegment(right, depth + 1)
            else:
                out.append((self.unk_id, piece))

        for symbol in merged.symbols:
            resegment(symbol)
        return out


PIPELINES = {"ugm": SentencePieceUnigram, "spm": SentencePieceBpe}
