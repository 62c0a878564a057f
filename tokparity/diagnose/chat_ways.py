"""The chat causes' ways, as causes.toml declares them: each a ``ChatVariant``, the named change of
tokparity.chat.way.ChatWay that an engine with that bug makes (tokparity.diagnose.chat
searches them; tokparity.diagnose.chat_read reads the values some of them take off a prompt)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import combinations

from tokparity.chat.way import TRANSFORMERS_WAY, ChatWay
from tokparity.diagnose.info import of_stage

OWN_CHECK_FIELDS = ("roles_known", "parts_refused", "alternation_refused")  # (the ChatWay fields of an engine's own refusals)


@dataclass(frozen=True)
class ChatVariant:
    name: str
    does: str  # what the backend does, as a sentence after "the backend"
    changes: tuple[tuple[str, object], ...]  # ChatWay fields (render switches included) and their values
    fix: str = ""
    library: str = ""  # tried only for a backend that is this library (llama.cpp's own built-ins)
    others_than: str = ""  # tried only for a backend that is not this library

    @cached_property
    def own_check(self) -> bool:
        """Whether this way refuses some requests by an engine's own check (a role, a content of parts)."""
        return any(key in OWN_CHECK_FIELDS for key, _ in self.changes)

    def way(self, base: ChatWay = TRANSFORMERS_WAY) -> ChatWay:
        return base.changed(**dict(self.changes))

    def applies(self, backend: str) -> bool:
        """Whether the search tries this way for ``backend``: a cause names a library only for
        that library (another engine that writes the same format is named for what it does)."""
        def named(library: str) -> bool:
            return backend == library or backend.startswith(library + "@")
        return (not self.library or named(self.library)) and not (self.others_than and named(self.others_than))


def _declared(name: str, entry: dict) -> list[ChatVariant]:
    """A cause's ways: its changes, then each of its other forms (a joiner of two turns: a blank
    line, a newline…). A cause whose value is read off the backend's prompt alone has none."""
    forms = ([entry["changes"]] if entry["changes"] else []) + list(entry.get("forms", []))
    return [ChatVariant(name, form.get("does", entry["does"]), tuple((k, v) for k, v in form.items() if k != "does"),
                        entry["fix"], entry.get("library", ""), entry.get("others_than", "")) for form in forms]


# Each way is declared once, in causes.toml (its words and the ChatWay fields it changes), in the
# order the search tries them.
CHAT_CAUSES = of_stage("chat")
VARIANTS = tuple(v for name, entry in CHAT_CAUSES.items() for v in _declared(name, entry))
# (a cause by its first way: its forms may say narrower words, each its own)
BY_NAME = {v.name: v for v in reversed(VARIANTS)} | {name: ChatVariant(name, entry["does"], (), entry["fix"])
                                             for name, entry in CHAT_CAUSES.items() if not entry["changes"]}
ORDER = {name: k for k, name in enumerate(CHAT_CAUSES)}
# The causes whose value is read off the backend's prompt (the text of the system message it adds,
# the words its raise_exception writes): cause -> the ChatWay field (tokparity.diagnose.chat_read.derived).
DERIVED = {name: entry["derived"] for name, entry in CHAT_CAUSES.items() if "derived" in entry}
# The values of those fields that declared causes try already (an empty system message, the message
# alone, nothing): a value read off a prompt that is one of them is left to its declared cause.
DECLARED_VALUES = {key: {value for v in VARIANTS for k, value in v.changes if k == key} for key in DERIVED.values()}
# The ways that change only how the prompt's text becomes ids (a BOS put first, special-token text
# not parsed): tried on top of each way of writing the text, so they never take a place of the cap.
ID_FIELDS = ("add_bos", "parse_special")
TEXT_VARIANTS = tuple(v for v in VARIANTS if not all(key in ID_FIELDS for key, _ in v.changes))
ENCODINGS = tuple(c for size in range(len(VARIANTS) - len(TEXT_VARIANTS) + 1)
                  for c in combinations(tuple(v for v in VARIANTS if v not in TEXT_VARIANTS), size))
# A BOS text left out of the prompt: tried on top of a way whose text is the backend's but for the
# BOS the template writes first, so a hand-written format's missing BOS takes no place of the cap either.
NO_BOS_TEXT = next(v for v in VARIANTS if v.name == "chat.bos-token-empty")


@lru_cache(maxsize=1 << 17)  # (the search asks the same sets for each row of an engine: about 60,000 of them)
def combined(variants: tuple[ChatVariant, ...]) -> ChatWay | None:
    """One way with every variant's changes (None where two set the same field differently)."""
    changes: dict[str, object] = {}
    for v in variants:
        for key, value in v.changes:
            if key in changes and changes[key] != value:
                return None
            changes[key] = value
    return TRANSFORMERS_WAY.changed(**changes)
