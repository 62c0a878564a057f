"""How the causes of one case combine: the order in which they are joined, and which two may be
one engine's deviations at once."""

from __future__ import annotations

from functools import lru_cache

# The order in which causes of one case are joined ("space.escape+model.greedy-longest-match").
STAGES = ("library", "input", "normalizer", "whitespace", "space", "pretokenizer", "model", "bytes", "unk", "specials", "user-defined",
          "bos", "eos", "ids", "unicode", "vocab")


@lru_cache(maxsize=4096)  # (asked for every variant of every candidate built)
def stage_of(cause: str) -> str:
    head = cause.split(".", 1)[0]
    return head if head in STAGES else "vocab"


# Stages whose variants each replace the same part of the pipeline (one normalizer, one whitespace
# rule, one split, one segmentation, one fallback, one way to add BOS): two of them at once are
# not one engine's bugs but a second reading (NFD toggled on the few texts where accents are not
# stripped either). The other stages' variants are independent switches: spaces not escaped *and*
# no dummy prefix; special-token text parsed *and* not stripped.
EXCLUSIVE_STAGES = frozenset({"library", "normalizer", "whitespace", "pretokenizer", "model", "bytes", "unk", "bos"})
# Causes that make an engine fail on some texts rather than give other ids: one goes with any deviation
# of the ids, its own stage's included (a JavaScript engine's lookups can fail whatever its merge does).
FAILURES = frozenset({"model.prototype-lookup", "specials.refused"})


# Keys of the variants made for one case, from its tokens or its text: two of one cause are two
# tokens (or two contraction forms) of the case, each its own.
CONTRACTION_FORMS = ("pretokenizer.contractions:-", "pretokenizer.contractions:+")  # a form left out, one added
MERGE_MISSING = "model.merge-missing"  # (variants/model.py builds it)
PER_CASE = ("specials.ids:", "user-defined.atomic:", "ids.truncated:", "input.edit:", "input.affixed:",
            "input.sliced:", "pretokenizer.char-table:", MERGE_MISSING + ":", *CONTRACTION_FORMS)
# A split variant that edits one part of the model's regexes (its contractions) goes with one that
# reads the same regexes otherwise (another engine's \s, digits kept whole), not with another split.
SPLIT_EDIT = "pretokenizer.contractions"
SPLIT_READINGS = frozenset({"pretokenizer.regex-engine", "pretokenizer.digits"})
# The rules of a split written by hand as a scanner: each member edits another part of the regexes, so
# an engine may have any number of them, with any edit or reading of the rest.
SCANNER = "pretokenizer.scanner"
# A part left out of the model's regex: it goes with a reading of the same regexes and with their
# contractions edited, as a scanner's rule does.
REGEX_PART = "pretokenizer.regex-part"
# Variants that say less than a named cause, and give many a case's ids by coincidence: a part left
# out of the model's regex, merges left out of the list, the text encoded in slices. A case tries
# them last, in this order, each only where no named cause and no earlier one gives its ids alone: a
# scanner's rule or another model's regex says more than a part missing, and a part missing more
# than a merge missing.
SLICED = "input.sliced:"
LAST_RESORT = (REGEX_PART + ":", MERGE_MISSING + ":", SLICED)


def resort_of(key: str) -> int:
    """0 for a named cause; a last resort's place in ``LAST_RESORT``, from 1."""
    return next((n for n, prefix in enumerate(LAST_RESORT, 1) if key.startswith(prefix)), 0)


def cause_of(key: str) -> str:
    """The catalogue name a variant's key stands for ("pretokenizer.regex-engine:ecmascript" ->
    "pretokenizer.regex-engine")."""
    return key.split(":", 1)[0]


def combinable(a: str, b: str) -> bool:
    """Whether the variants ``a`` and ``b`` (keys) may be two deviations of one engine: not two
    readings of one cause (unless each is about another token), not two of an exclusive stage."""
    if a == b or a.startswith(MERGE_MISSING) or b.startswith(MERGE_MISSING):
        return False  # (a merge missing fits many a case by chance: never a part of a composed set)
    cause_a, cause_b = cause_of(a), cause_of(b)
    if cause_a == cause_b:
        if cause_a == SPLIT_EDIT:  # forms of a hand-written list, and at most one way it was spelt
            return a.startswith(PER_CASE) or b.startswith(PER_CASE)
        if cause_a == SCANNER:
            return True
        # (two edits of the text are one edit, two character tables one table: verdict._combined
        # joins them; an engine has one limit on its ids)
        if cause_a in ("input.edit", "input.affixed", "input.sliced", "ids.truncated", "pretokenizer.char-table"):
            return False
        return a.startswith(PER_CASE) and b.startswith(PER_CASE)  # two tokens of a case, each its own
    if cause_a in FAILURES or cause_b in FAILURES:
        return True
    if SPLIT_EDIT in (cause_a, cause_b) and {cause_a, cause_b} - {SPLIT_EDIT} <= SPLIT_READINGS:
        return True
    if "pretokenizer.regex-engine" in (cause_a, cause_b) and {cause_a, cause_b} - {"pretokenizer.regex-engine"} <= \
            _other_splits():
        return True  # (a port that hard-codes another model's regexes runs them with its own engine)
    if SCANNER in (cause_a, cause_b) and {cause_a, cause_b} - {SCANNER} <= SPLIT_READINGS | {SPLIT_EDIT}:
        return True
    if REGEX_PART in (cause_a, cause_b) and {cause_a, cause_b} - {REGEX_PART} <= SPLIT_READINGS | {SPLIT_EDIT}:
        return True
    stage = stage_of(cause_a)
    if stage != stage_of(cause_b):
        return True
    return stage not in EXCLUSIVE_STAGES


def split_name(key: str) -> str:
    """The name of another model's whole split in its cause (``pretokenizer.gpt-2`` for the table's ``gpt2``)."""
    return "gpt-2" if key == "gpt2" else key


@lru_cache(maxsize=1)
def _other_splits() -> frozenset[str]:
    """The causes that put another model's whole split in place of the model's (``pretokenizer.qwen2``)."""
    from tokparity.reference.pretokenize import REGEXES

    return frozenset(f"pretokenizer.{split_name(key)}" for key in REGEXES)
