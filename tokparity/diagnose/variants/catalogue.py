"""The catalogue: every variant that does not depend on the case, stage by stage; the keys of the
variants made for one case (``case_keys``); and the variant each such key stands for (``case_variant``)."""

from __future__ import annotations

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.contractions import form_keys
from tokparity.diagnose.variants import (
    char_table,
    fallback,
    ids,
    model,
    normalizer,
    pretokenizer,
    regex_parts,
    specials,
    text_input,
    whitespace,
)
from tokparity.diagnose.variants.rules import CONTRACTION_FORMS
from tokparity.diagnose.variants.slices import slicing_keys
from tokparity.diagnose.variants.variant import Variant
from tokparity.reference.hf import HfPipeline
from tokparity.reference.llama import LlamaCppPipeline, LlamaWpm
from tokparity.vocab.model import TokenType, Vocab


def catalogue() -> list[Variant]:
    """Every variant that does not depend on the case, in pipeline order."""
    # Within a stage the specific variants come first: where the model's whole normalizer is one
    # NFC step (Qwen 3), "no normalizer" and "no NFC" are the same deviation, reproduce the same
    # cases and change the same probes, and the tie goes to the one that says what is missing.
    return [*char_table.variants(), *text_input.variants(), *normalizer.variants(), *whitespace.variants(), *pretokenizer.variants(), *regex_parts.variants(),
            *model.variants(), *fallback.variants(), *specials.variants(), *pretokenizer.unicode_variants(),
            *ids.variants()]


def case_keys(pipeline, vocab: Vocab, text: str, target: list[int], oracle: list[int]) -> list[str]:
    """The variants about one token or one form of the text: ``specials.ids`` for the control
    tokens the backend emits and the oracle does not; ``user-defined.atomic`` for the pieces
    whose text is in the input and which one side matched whole more often than the other;
    ``pretokenizer.contractions`` for the contraction forms the text holds (left out) and
    the misspelt ones (matched); ``ids.truncated`` where the backend's ids are the oracle's
    cut short (at that length, and at each rule of the text's length that gives it);
    ``input.sliced`` for each law of slices the backend's token boundaries allow;
    ``model.merge-missing`` for the merges that build a token the backend has fewer of."""
    extra = [i for i in dict.fromkeys(target) if i not in oracle and vocab.type_of(i) == TokenType.CONTROL]
    out = [f"specials.ids:{role}={i}" for i in extra[:3] for role in ("unk", "bos", "eos")]
    for i in dict.fromkeys(oracle + target):
        if vocab.type_of(i) in (TokenType.USER_DEFINED, TokenType.CONTROL) and vocab.tokens[i] \
                and vocab.tokens[i].replace("\u2581", " ") in text and oracle.count(i) != target.count(i):
            out.append(f"user-defined.atomic:{'+' if target.count(i) > oracle.count(i) else '-'}{i}")
    return ids.truncations(oracle, target, text) + slicing_keys(vocab, text, oracle, target) + out[:8] + \
        [f"pretokenizer.contractions:{edit}" for edit in form_keys(text)[:4]] + \
        model.missing_merge_keys(pipeline, vocab, oracle, target)


def learnt_keys(vocab: Vocab, text: str, oracle: list[int], target: list[int]) -> list[str]:
    """The keys learnt from a case that no named cause reproduced: an edit of its characters
    (``input.edit``), then a text put before or after it (``input.affixed``)."""
    from tokparity.diagnose.variants.text_affix import affix_key
    from tokparity.diagnose.variants.text_edit import edit_of

    edit = edit_of(vocab, oracle, target)
    return [key for key in (edit.key() if edit is not None else None, affix_key(vocab, text, oracle, target)) if key]


def case_variant(key: str) -> Variant | None:
    """The variant of a key made for one case (``rules.PER_CASE``: a token, a limit, a contraction
    form, a law of slices, a learnt edit, affix or character table); None for any other key."""
    from tokparity.diagnose.variants.ids import truncated_variant
    from tokparity.diagnose.variants.pretokenizer import contraction_variant
    from tokparity.diagnose.variants.slices import sliced_variant
    from tokparity.diagnose.variants.specials import special_ids_variant, user_defined_variant
    from tokparity.diagnose.variants.text_affix import affix_variant
    from tokparity.diagnose.variants.text_edit import PREFIX as EDIT
    from tokparity.diagnose.variants.text_edit import edit_variant

    head, _, spec = key.partition(":")
    if not spec:
        return None
    if head == "specials.ids":
        role, target = spec.split("=")
        return special_ids_variant(role, int(target))
    if head == "user-defined.atomic":
        return user_defined_variant(int(spec[1:]), whole=spec[0] == "+")
    if head == "ids.truncated":
        return truncated_variant(spec)
    if head == "input.sliced":
        return sliced_variant(spec)
    if head == "input.affixed":
        return affix_variant(key)
    if head == model.MERGE_MISSING:
        return model.merge_missing_variant(spec)
    if key.startswith(CONTRACTION_FORMS):
        return contraction_variant(spec)
    if key.startswith(EDIT):
        return edit_variant(key)
    return char_table.table_variant(key) if char_table.is_table(key) else None


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
