"""What a model's files must hold, checked without any engine under test: ``tokparity check``.

Some tokenizer bugs live in a model's files, not in an engine, and every engine inherits them. Each
property here reads the files (and, where a library decides, runs that library on them) and says
whether the property holds. A broken one names the file and key that say so, the smallest example,
and which engines it hits:

* ``end-of-generation`` (ends.py): the ids that end a generation, per file and per engine, beside
  the tokens the chat template closes an assistant turn and a tool call with.
* ``vocabulary-size`` (sizes.py): the vocabulary's size as each file says it, and what each
  library decodes for the ids in a gap.
* ``multi-turn-prefix`` (turns.py): the ids after a turn (its prompt and the reply) are the start of
  the next turn's prompt, for each conversation of the ``chats`` corpus.
* ``round-trip`` (round_trip.py): ``decode(encode(text))`` gives the text back, per library, where
  the model promises it.
"""

from __future__ import annotations

from dataclasses import dataclass

PROPERTIES = ("end-of-generation", "vocabulary-size", "multi-turn-prefix", "round-trip")

HELD, BROKEN, NOT_CHECKED = "held", "broken", "not checked"
MARKED = {HELD: "✓ held", BROKEN: "✗ broken", NOT_CHECKED: "not checked"}  # each status as a table shows it


@dataclass(frozen=True)
class Finding:
    """One thing a property found: what breaks and whom it hits (``said``), the file and key that
    say so (``where``), the smallest example. ``broken`` False: a difference that breaks nothing,
    said so a reader is not left to guess."""

    said: str
    where: str
    example: str = ""
    broken: bool = True


@dataclass(frozen=True)
class PropertyCheck:
    """One property of one model. ``facts``: what each file or library says, one line each."""

    name: str
    status: str  # HELD, BROKEN or NOT_CHECKED
    facts: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    why: str = ""  # NOT_CHECKED: why not

    @classmethod
    def of(cls, name: str, facts: list[str], findings: list[Finding]) -> PropertyCheck:
        status = BROKEN if any(f.broken for f in findings) else HELD
        return cls(name, status, tuple(facts), tuple(findings))

    @classmethod
    def skipped(cls, name: str, why: str) -> PropertyCheck:
        return cls(name, NOT_CHECKED, why=why)

    def to_json(self) -> dict:
        return {"property": self.name, "status": self.status, "facts": list(self.facts), "why": self.why,
                "findings": [{"said": f.said, "where": f.where, "example": f.example, "broken": f.broken}
                             for f in self.findings]}

    @classmethod
    def from_json(cls, d: dict) -> PropertyCheck:
        """What ``to_json`` wrote, read back (a summary.json); a field of the wrong kind is a ValueError."""
        if d.get("status") not in (HELD, BROKEN, NOT_CHECKED):
            raise ValueError(f"a property's status is {d.get('status')!r}")
        findings = tuple(Finding(_text(f, "said"), _text(f, "where"), _text(f, "example"), bool(f.get("broken", True)))
                         for f in _listed(d, "findings", dict))
        return cls(_text(d, "property"), d["status"], tuple(_listed(d, "facts", str)), findings, _text(d, "why"))


@dataclass(frozen=True)
class ModelCheck:
    model: str
    properties: tuple[PropertyCheck, ...]

    @property
    def broken(self) -> bool:
        return any(p.status == BROKEN for p in self.properties)

    @property
    def checked(self) -> bool:
        """Whether any property could be checked at all (a run that checked nothing is no green run)."""
        return any(p.status != NOT_CHECKED for p in self.properties)

    def to_json(self) -> dict:
        return {"model": self.model, "broken": self.broken, "properties": [p.to_json() for p in self.properties]}

    @classmethod
    def from_json(cls, d: dict) -> ModelCheck:
        if not isinstance(d, dict):
            raise ValueError(f"a model's checks are {type(d).__name__}, not an object")
        return cls(_text(d, "model"), tuple(PropertyCheck.from_json(p) for p in _listed(d, "properties", dict)))


def _text(d: dict, key: str) -> str:
    value = d.get(key, "")
    if not isinstance(value, str):
        raise ValueError(f"'{key}' is {type(value).__name__}, not text")
    return value


def _listed(d: dict, key: str, kind: type) -> list:
    value = d.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, kind) for v in value):
        raise ValueError(f"'{key}' is not a list of {kind.__name__}")
    return value
