"""A variant of the reference: one deviation of one stage (``Variant``), and the helpers every
stage's variants build on."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from tokparity.diagnose.candidate import Candidate, fork
from tokparity.diagnose.variants.rules import FAILURES, STAGES, stage_of
from tokparity.reference.llama import LlamaUgm
from tokparity.reference.sentencepiece import SentencePiecePipeline
from tokparity.vocab import TokenType, Vocab
from tokparity.vocab.token_bytes import token_bytes


@dataclass(frozen=True)
class Variant:
    key: str  # unique: the cause, and for a family the member ("pretokenizer.regex-engine:ecmascript")
    cause: str  # the catalogue name it reproduces
    detail: str  # what exactly the variant does, for the evidence
    apply: Callable[[Candidate], Candidate | None]
    # Whether the variant (built: the candidate) can change anything of a text; None: it may
    # change any. A variant of the input text that cannot (no NUL to cut at) is not encoded.
    affects: Callable[[Candidate, str], bool] | None = None
    # A deviation that may change nothing alone where another shows it (another release's special
    # tokens, with parsing off, show only where the text is cut at special-token text): the
    # run's verdict tries it as one more part even where no case's own set held it.
    needs_another: bool = False
    # A simpler variant this one equals on every text ``affects`` says it leaves alone (a walk by
    # UTF-16 code units is the plain longest match on a text with no character past U+FFFF). Where
    # both reproduce a case, the simpler one is named and this one is no alternative.
    refines: str | None = None
    # A variant whose build takes seconds (a whole vocabulary's tables): it is tried on a case
    # only where no other variant reproduces it alone, so a run whose cases the catalogue's other
    # causes explain never builds it. The run's verdict weighs it wherever some case needed it.
    costly: bool = False

    @property
    def stage(self) -> int:
        return STAGES.index(stage_of(self.cause))

    @property
    def fails(self) -> bool:
        """Whether the variant makes the engine fail (no ids) rather than give other ids."""
        return self.cause in FAILURES


def spelt(vocab: Vocab, ids: Sequence[int]) -> tuple[str, set[int]] | None:
    """The text ``ids`` spell, their special tokens left out, and the characters after which one of
    them ends; None where their bytes are not UTF-8."""
    pieces = [token_bytes(vocab, i) for i in ids if 0 <= i < vocab.size and vocab.type_of(i) != TokenType.CONTROL]
    try:
        text = b"".join(pieces).decode("utf-8")
    except UnicodeDecodeError:
        return None
    starts, at = {}, 0
    for k, ch in enumerate(text):
        starts[at] = k
        at += len(ch.encode("utf-8"))
    return text, {starts[e] for e in accumulate(map(len, pieces)) if e in starts}


def with_pipeline(c: Candidate, pipeline) -> Candidate:
    return c.replace(pipeline=pipeline)


def is_ugm_or_sp(p) -> bool:
    return isinstance(p, (LlamaUgm, SentencePiecePipeline))


def renormalized(c: Candidate, **changes) -> Candidate | None:
    """The pipeline with its SentencePiece-style normalizer rebuilt with ``changes``."""
    p = c.pipeline
    if not is_ugm_or_sp(p):
        return None
    return with_pipeline(c, fork(p, normalizer=p.normalizer.replaced(**changes)))


# What a variant builds from a whole vocabulary (a longest-match trie, a pattern of its special
# texts), made once per vocabulary and kind: candidates are built again and again (a composed set
# is a new one, and only the last CANDIDATES_KEPT stay built). The most recently used are kept:
# a model's dozen kinds, for the few vocabularies a process meets in turn.
_BUILT_FROM_VOCAB: OrderedDict[tuple, tuple[object, object, tuple]] = OrderedDict()
BUILT_KEPT = 48


def per_vocab(vocab, kind: tuple, make: Callable[[], object], sources: tuple = ()):
    """What ``make`` builds, once per vocabulary, kind and ``sources``: the pipeline's parts it is
    made from besides the vocabulary (its merge list, its token map), which a composed candidate
    may have replaced."""
    key = (id(vocab), kind, tuple(id(s) for s in sources))
    found = _BUILT_FROM_VOCAB.get(key)
    if found is None or found[0] is not vocab or any(a is not b for a, b in zip(found[2], sources)):
        # (an entry keeps its vocabulary and sources alive, so no id in a key is reused while it stays)
        found = _BUILT_FROM_VOCAB[key] = (vocab, make(), sources)
        while len(_BUILT_FROM_VOCAB) > BUILT_KEPT:
            _BUILT_FROM_VOCAB.popitem(last=False)
    _BUILT_FROM_VOCAB.move_to_end(key)
    return found[1]
