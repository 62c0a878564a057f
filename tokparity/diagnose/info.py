"""What each cause means, for the reports and the class check: ``causes.toml`` beside this module."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def _causes() -> dict[str, dict]:
    return tomllib.loads(resources.files("tokparity.diagnose").joinpath("causes.toml").read_text("utf-8"))


def cause_info(name: str) -> dict:
    """``{"classes", "stage", "fix", "spec"}`` of one cause name (not a ``+``-joined one)."""
    table = _causes()
    if name in table:
        return table[name]
    if name.startswith("pretokenizer."):
        return table["pretokenizer"]
    if name.split(".")[0] == "chat":  # the chat causes (tokparity.diagnose.chat)
        from tokparity.diagnose.chat import BY_NAME as CHAT_CAUSES
        from tokparity.diagnose.chat import SPEC as CHAT_SPEC
        if name in CHAT_CAUSES:
            return {"classes": [], "stage": "chat", "fix": CHAT_CAUSES[name].fix, "spec": CHAT_SPEC}
    if name.split(".")[0] in ("decode", "stream", "pieces"):  # the decoding ops' (tokparity.diagnose.decoding)
        from tokparity.diagnose.decoding import BY_NAME, REVIEWED, info
        if name in BY_NAME:
            return BY_NAME[name].info()
        if name in REVIEWED:
            return info(*REVIEWED[name])
    return {"classes": [], "stage": "unknown", "fix": "", "spec": ""}


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


def fits(symptom: str, cause: str) -> bool:
    """Whether a mismatch of class ``symptom`` may have ``cause``: the class is one of the cause's
    symptoms (an unclassified mismatch may have any cause)."""
    return symptom in ("", "unclassified") or consistent_class(symptom, cause) == symptom


def is_stage_level(cause: str) -> bool:
    """Whether ``cause`` only names the stage that differs (``normalizer.other``, …): no switch
    of the catalogue reproduced the ids, so nothing may be said to reproduce them."""
    return any(name.endswith(".other") for name in parts(cause))


def stage_of_cause(cause: str) -> str:
    """The first pipeline stage the cause puts the divergence in (the CSV's ``stage`` column)."""
    names = parts(cause)
    return cause_info(names[0])["stage"] if names else "unknown"
