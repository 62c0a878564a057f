"""Reading one tokenizer.json component: its fields, typed, with tokenizers' defaults.

Each component is a JSON object with a ``"type"``; a ``Fields`` wraps one and answers typed
questions about it (``fields.bool("split", True)``). A field of the wrong type is a
``BadModelFile`` naming the component and the field ("pre_tokenizer[1] (Metaspace): split is
"yes", expected true or false"). A missing field takes the default tokenizers gives it (its
``Default`` impl or its ``#[serde(default)]``); tokparity is lenient where tokenizers insists on
a field, since the value it would have is not in doubt.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

from tokparity.errors import BadModelFile
from tokparity.textview import clipped

_MISSING: Any = object()
BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


class Fields:
    def __init__(self, path: Path, where: builtins.str, obj: dict):
        self.path = path
        self.where = where  # "normalizer[2] (Replace)"
        self.obj = obj

    def bad(self, problem: builtins.str) -> BadModelFile:
        return BadModelFile(self.path, f"{self.where} {problem}")

    def _get(self, name: builtins.str, default: Any) -> Any:
        value = self.obj.get(name, _MISSING)
        if value is _MISSING or (value is None and default is not _MISSING):
            if default is _MISSING:
                raise self.bad(f"has no '{name}'")
            return default
        return value

    def bool(self, name: builtins.str, default: Any = _MISSING) -> builtins.bool:
        value = self._get(name, default)
        if not isinstance(value, builtins.bool):
            raise self.bad(f"{name} is {clipped(value)}, expected true or false")
        return value

    def optional_bool(self, name: builtins.str) -> builtins.bool | None:
        value = self.obj.get(name)
        if value is not None and not isinstance(value, builtins.bool):
            raise self.bad(f"{name} is {clipped(value)}, expected true, false or null")
        return value

    def str(self, name: builtins.str, default: Any = _MISSING) -> builtins.str:
        value = self._get(name, default)
        if not isinstance(value, builtins.str):
            raise self.bad(f"{name} is {clipped(value)}, expected a string")
        return value

    def optional_str(self, name: builtins.str) -> builtins.str | None:
        value = self.obj.get(name)
        if value is not None and not isinstance(value, builtins.str):
            raise self.bad(f"{name} is {clipped(value)}, expected a string or null")
        return value

    def char(self, name: builtins.str, default: Any = _MISSING) -> builtins.str:
        value = self.str(name, default)
        if len(value) != 1:
            raise self.bad(f"{name} is {clipped(value)}, expected one character")
        return value

    def int(self, name: builtins.str, default: Any = _MISSING, minimum: builtins.int = 0) -> builtins.int:
        value = self._get(name, default)
        if not isinstance(value, builtins.int) or isinstance(value, builtins.bool) or value < minimum:
            raise self.bad(f"{name} is {clipped(value)}, expected an integer >= {minimum}")
        return value

    def choice(self, name: builtins.str, choices: tuple[builtins.str, ...], default: Any = _MISSING) -> builtins.str:
        value = self._get(name, default)
        if value not in choices:
            raise self.bad(f"{name} is {clipped(value)}, expected one of {', '.join(choices)}")
        return value

    def list(self, name: builtins.str, default: Any = _MISSING) -> builtins.list:
        value = self._get(name, default)
        if not isinstance(value, builtins.list):
            raise self.bad(f"{name} is {clipped(value)}, expected a list")
        return value

    def pattern(self) -> tuple[builtins.str, builtins.bool]:
        """A Replace or Split ``pattern``: ``{"String": " "}`` or ``{"Regex": "..."}`` -> (text, is_regex)."""
        if "pattern" not in self.obj:
            raise self.bad("has no 'pattern'; expected {\"String\": ...} or {\"Regex\": ...}")
        p = self.obj["pattern"]
        if not (isinstance(p, dict) and len(p) == 1 and next(iter(p)) in ("String", "Regex")
                and isinstance(next(iter(p.values())), builtins.str)):
            raise self.bad(f"pattern is {clipped(p)}; expected {{\"String\": \"...\"}} or {{\"Regex\": \"...\"}}")
        kind, text = next(iter(p.items()))
        return text, kind == "Regex"


def component_type(path: Path, where: str, obj: Any, known: dict) -> Any:
    """The class for ``obj["type"]`` among ``known`` (tokenizers' names), or a one-line error."""
    if not isinstance(obj, dict):
        raise BadModelFile(path, f"{where} is {clipped(obj)}, expected an object with a \"type\"")
    kind = obj.get("type")
    if not isinstance(kind, str) or kind not in known:
        raise BadModelFile(path, f"{where} has unknown type {clipped(kind)}; tokenizers has "
                                 f"{', '.join(sorted(known))}")
    return known[kind]
