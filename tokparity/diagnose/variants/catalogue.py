"""The catalogue: every variant that does not depend on the case, stage by stage."""

from __future__ import annotations

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants import fallback, model, normalizer, pretokenizer, specials, text_input, whitespace
from tokparity.diagnose.variants.variant import Variant
from tokparity.reference.hf import HfPipeline
from tokparity.reference.llama import LlamaCppPipeline, LlamaWpm


def catalogue() -> list[Variant]:
    """Every variant that does not depend on the case, in pipeline order."""
    # Within a stage the specific variants come first: where the model's whole normalizer is one
    # NFC step (Qwen 3), "no normalizer" and "no NFC" are the same deviation, reproduce the same
    # cases and change the same probes, and the tie goes to the one that says what is missing.
    return [*text_input.variants(), *normalizer.variants(), *whitespace.variants(), *pretokenizer.variants(),
            *model.variants(), *fallback.variants(), *specials.variants(), *pretokenizer.unicode_variants()]


def base_candidate(tokenizer) -> Candidate:
    """The unchanged reference of a ``RefTokenizer``, with its BOS/EOS ids."""
    p = tokenizer.pipeline
    vocab = tokenizer.vocab
    bos = eos = None
    if isinstance(p, LlamaCppPipeline):
        bos, eos = p.flags.specials.get("bos"), p.flags.specials.get("eos")
        if isinstance(p, LlamaWpm):
            eos = p.flags.specials.get("sep")
    elif isinstance(p, HfPipeline):
        bos = p.prefix[0] if p.prefix else vocab.special_ids.get("bos")
        eos = p.suffix[-1] if p.suffix else vocab.special_ids.get("eos")
    else:
        bos, eos = vocab.special_ids.get("bos"), vocab.special_ids.get("eos")
    return Candidate(p, vocab, bos_id=bos, eos_id=eos)
