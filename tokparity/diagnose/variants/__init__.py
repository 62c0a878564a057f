"""The root-cause catalogue as code: each cause a named deviation of the reference.

A cause (``docs/catalogue/causes.md``) says what a backend does differently from
the oracle, as ``stage.deviation``. Here each one is a ``Variant``: a function that takes the
reference (a ``Candidate``) and returns a copy in which that one thing is done the other way,
or ``None`` where the deviation means nothing for this model (no charsmap to skip, no merges to
reorder). A diagnosis then asks which variants make the reference give the backend's ids.

Each deviation is written against the pipelines of ``tokparity.reference`` (llama.cpp's,
SentencePiece's and tokenizers'), through the switches and stages they expose; "the other way"
is a toggle where the model's setting is a flag (a dummy prefix added where the file says none,
or omitted where it says one), so one variant covers both directions.

A vocabulary small enough to follow by hand, as llama.cpp reads a SentencePiece-BPE GGUF, and
three variants of the reference on it (``catalogue()`` holds them all):

    >>> from tokparity.reference import RefTokenizer
    >>> from tokparity.vocab.model import Flags, TokenType as T, Vocab
    >>> vocab = Vocab("spm", ["<unk>", "<s>", "▁", "a", "b", "ab", "▁a"], scores=[0, 0, -1, -2, -2, -0.5, -3],
    ...               token_types=[T.UNKNOWN, T.CONTROL] + [T.NORMAL] * 5, flags=Flags(add_space_prefix=True),
    ...               source_format="gguf")
    >>> reference = base_candidate(RefTokenizer(vocab))
    >>> variants = {v.key: v for v in catalogue()}
    >>> reference.encode("ab", add_special=False, parse_special=False)        # '▁', 'ab'
    [2, 5]
    >>> greedy = variants["model.greedy-longest-match"].apply(reference)
    >>> greedy.encode("ab", add_special=False, parse_special=False)           # '▁a', 'b'
    [6, 4]
    >>> no_prefix = variants["space.dummy-prefix"].apply(reference)
    >>> no_prefix.encode("ab", add_special=False, parse_special=False)        # 'ab'
    [5]
    >>> variants["normalizer.nfkc"].apply(reference) is None                  # no charsmap to replace
    True
"""

from tokparity.diagnose.variants.catalogue import base_candidate, case_keys, case_variant, catalogue, learnt_keys
from tokparity.diagnose.variants.library import release_variant
from tokparity.diagnose.variants.model import rightmost_ties
from tokparity.diagnose.variants.pretokenizer import SCANNER_RULES, contraction_variant
from tokparity.diagnose.variants.rules import (
    CONTRACTION_FORMS,
    EXCLUSIVE_STAGES,
    FAILURES,
    LAST_RESORT,
    MERGE_MISSING,
    PER_CASE,
    REGEX_PART,
    SCANNER,
    SPLIT_EDIT,
    SPLIT_READINGS,
    STAGES,
    cause_of,
    combinable,
    resort_of,
    stage_of,
)
from tokparity.diagnose.variants.specials import special_ids_variant, user_defined_variant
from tokparity.diagnose.variants.text_edit import PREFIX as EDIT
from tokparity.diagnose.variants.text_edit import TextEdit, all_joined, edit_of, edit_variant, is_edit, said_of
from tokparity.diagnose.variants.text_edit import parse as parse_edit
from tokparity.diagnose.variants.variant import Variant

__all__ = ["CONTRACTION_FORMS", "EDIT", "EXCLUSIVE_STAGES", "FAILURES", "LAST_RESORT", "MERGE_MISSING", "PER_CASE", "REGEX_PART", "SCANNER", "SCANNER_RULES", "SPLIT_EDIT",
           "SPLIT_READINGS", "STAGES", "TextEdit", "Variant", "all_joined", "base_candidate", "case_keys", "case_variant", "catalogue", "cause_of", "combinable",
           "contraction_variant", "edit_of", "edit_variant", "is_edit", "learnt_keys", "parse_edit", "release_variant", "resort_of", "rightmost_ties", "said_of", "special_ids_variant", "stage_of",
           "user_defined_variant"]
