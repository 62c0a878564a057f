"""What each bug class means, for the reports: ``classes.toml`` beside this module."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def _classes() -> dict[str, dict[str, str]]:
    return tomllib.loads(resources.files("tokparity.diff").joinpath("classes.toml").read_text("utf-8"))


def class_info(name: str) -> dict[str, str]:
    """``{"symptom": ..., "implication": ...}`` for a class name (unknown names get a neutral text)."""
    return _classes().get(name, {"symptom": name, "implication": "no description for this class"})


def class_names() -> list[str]:
    return list(_classes())
