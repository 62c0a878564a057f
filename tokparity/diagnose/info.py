"""Every cause tokparity can name, of every op, as ``causes.toml`` beside this module declares it:
its symptoms, stage, fix, spec, what the backend does, a real case, and how it is built. The
reports, the catalogue page, the ``--known`` checks and the class check read it here."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources

DECODING_OPS = ("decode", "stream", "pieces")
UNDECLARED = {"classes": [], "stage": "unknown", "fix": "", "spec": ""}


@lru_cache(maxsize=1)
def declared() -> dict[str, dict]:
    """Every cause, by name, in the order causes.toml declares them."""
    return tomllib.loads(resources.files("tokparity.diagnose").joinpath("causes.toml").read_text("utf-8"))


def of_stage(*stages: str) -> dict[str, dict]:
    """The causes declared for ``stages`` (``chat``, or a decoding op), in their declared order."""
    return {name: entry for name, entry in declared().items() if entry["stage"] in stages}


def cause_info(name: str) -> dict:
    """The declaration of one cause name (not a ``+``-joined one): a member of the pretokenizer
    family (``pretokenizer.gpt-2``) is declared by the family; an undeclared name by nothing."""
    table = declared()
    if name in table:
        return table[name]
    if name.startswith("pretokenizer."):
        return table["pretokenizer"]
    return UNDECLARED


def is_declared(name: str) -> bool:
    return cause_info(name) is not UNDECLARED


def parts(cause: str) -> list[str]:
    return [p for p in cause.split("+") if p]


def consistent_class(cls: str, cause: str) -> str:
    """The class a report gives a mismatch whose cause is ``cause``: the rule-based class when it
    is one of the cause's symptoms, else the first cause's own first symptom. A class never
    contradicts the reproduced cause (a crash or a timeout stays one: a failure reproduced is still
    a failure)."""
    names = parts(cause)
    if not names or cls in ("crash", "timeout", "vocab-mismatch"):
        return cls
    allowed = [c for n in names for c in cause_info(n)["classes"]]
    if cls in allowed or not allowed:
        return cls
    return allowed[0]


# Classes any cause may give: unclassified, and ids cut short (a stripped or dropped last character
# leaves the oracle's first ids too, so the class tells no cause from another).
OPEN_CLASSES = ("", "unclassified", "ids-cut-short")


def fits(symptom: str, cause: str) -> bool:
    """Whether a mismatch of class ``symptom`` may have ``cause``: the class is one of the cause's
    symptoms (a mismatch of an open class may have any cause)."""
    return symptom in OPEN_CLASSES or consistent_class(symptom, cause) == symptom


def is_stage_level(cause: str) -> bool:
    """Whether ``cause`` only names the stage that differs (``normalizer.other``, …): no switch
    of the catalogue reproduced the ids, so nothing may be said to reproduce them."""
    return any(name.endswith(".other") for name in parts(cause))


def stage_of_cause(cause: str) -> str:
    """The first pipeline stage the cause puts the divergence in (the CSV's ``stage`` column)."""
    names = parts(cause)
    return cause_info(names[0])["stage"] if names else "unknown"
