"""Diagnosis by reproduction: the root cause of a mismatch is what makes the reference give the
backend's ids exactly.

    variants/         the root-cause catalogue as deviations of the reference, one module per stage
                      (text_input, normalizer, whitespace, pretokenizer, model, fallback, specials,
                      library), the combination rules (rules.py), the imitated lookup tables of
                      JavaScript engines (lookup_keys.py) and the catalogue's order (catalogue.py)
    candidate.py      the reference with deviations applied
    regex_engines.py  a split regex as ECMAScript, RE2 or another Unicode version reads it
    search.py         the per-case search: smallest set of variants that reproduces the ids
    cause.py          a Cause: the variants that reproduce one mismatch
    stages.py         the stage proven to differ when no variant reproduces (ties: diff/ties.py)
    verdict.py        the run-level root cause: the set that explains the most mismatches and
                      keeps the agreeing cases agreeing
    decoding.py       the causes of decode, stream and pieces: variants of the reference's decoding
    wrong_decoders.py what a decoder with each of those bugs answers
    chat.py           the causes of chat: ways of making the prompt otherwise
    causes.toml       every cause of every op, declared once: its symptoms, stage, fix, spec, words,
                      real case and how it is built
    info.py           reads causes.toml: a cause's declaration; whether a class fits a cause
"""

from tokparity.diagnose.cause import Cause
from tokparity.diagnose.search import Diagnoser

__all__ = ["Cause", "Diagnoser"]
