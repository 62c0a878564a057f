"""The causes of ``--ops chat`` mismatches, named by reproduction: the reference's prompt made
another way, one named step or several at once (tokparity.chat.reference.ChatWay), gives the
backend's prompt exactly: its ids where it gave ids, its text where it gave text, or the same
refusal.

The smallest set of ``ChatVariant``s that reproduces the backend's prompt names the cause: up to
three ways of writing the text at once, and on top of them the ways of encoding it (a BOS put
first, special-token text not parsed), so an engine with several bugs gets all of them named.
Other sets found with as many ways of writing the text are its alternatives. None is named where
none reproduces it: the class stays the judge's.
The catalogue (docs/catalogue/causes.md, "Chat causes") describes each name with its real cases.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import combinations

from tokparity.chat import RAISED_SHOWN, ChatAnswer
from tokparity.chat.conversation import Conversation
from tokparity.chat.reference import TRANSFORMERS_WAY, ChatReference, ChatWay
from tokparity.diagnose.info import of_stage
from tokparity.errors import CaseFailure, TemplateRaised
from tokparity.records import Diagnosis, Judgement

MAX_AT_ONCE = 3
SEARCH_SECONDS = 10.0  # per mismatch: a long prompt or a slow template must not hold the run


@dataclass(frozen=True)
class ChatVariant:
    name: str
    does: str  # what the backend does, as a sentence after "the backend"
    changes: tuple[tuple[str, object], ...]  # ChatWay fields (render switches included) and their values
    fix: str = ""

    def way(self, base: ChatWay = TRANSFORMERS_WAY) -> ChatWay:
        return base.changed(**dict(self.changes))


# Each way is declared once, in causes.toml (its words and the ChatWay fields it changes), in the
# order the search tries them.
VARIANTS = tuple(ChatVariant(name, entry["does"], tuple(entry["changes"].items()), entry["fix"])
                 for name, entry in of_stage("chat").items())
BY_NAME = {v.name: v for v in VARIANTS}
ORDER = {v.name: k for k, v in enumerate(VARIANTS)}
# The ways that change only how the prompt's text becomes ids (a BOS put first, special-token text
# not parsed): tried on top of each way of writing the text, so they never take a place of the cap.
ID_FIELDS = ("add_bos", "parse_special")
TEXT_VARIANTS = tuple(v for v in VARIANTS if not all(key in ID_FIELDS for key, _ in v.changes))
ENCODINGS = tuple(c for size in range(len(VARIANTS) - len(TEXT_VARIANTS) + 1)
                  for c in combinations(tuple(v for v in VARIANTS if v not in TEXT_VARIANTS), size))


def _combined(variants: tuple[ChatVariant, ...]) -> ChatWay | None:
    """One way with every variant's changes (None where two set the same field differently)."""
    changes: dict[str, object] = {}
    for v in variants:
        for key, value in v.changes:
            if key in changes and changes[key] != value:
                return None
            changes[key] = value
    return TRANSFORMERS_WAY.changed(**changes)


def _backend_answer(j: Judgement) -> ChatAnswer:
    """The backend's prompt as the judge kept it (``tags["gave"]``: text, ids or both)."""
    output = j.backend_output[0] if j.backend_output else None
    if output is not None and output.startswith(RAISED_SHOWN):
        return ChatAnswer(raised=output)
    gave = j.tags.get("gave", "both")
    return ChatAnswer(output if gave != "ids" else None, list(j.backend_ids) if gave != "text" else None)


def _same(answer: ChatAnswer, got: ChatAnswer) -> bool:
    """Whether a way's prompt is the backend's: its ids where it gave ids, its text where it gave text.
    A refusal reproduces nothing: two engines refuse for their own reasons (a missing filter, an
    empty list), and which one is not known from a message."""
    if got.raised or answer.raised:
        return False
    if got.ids is not None and answer.ids != got.ids:
        return False
    return got.text is None or answer.text == got.text


def diagnose_chat(reference: ChatReference, j: Judgement) -> Diagnosis:
    if j.cls == "chat-special-split":  # (the template's own check: the expected prompt against its tokenizer)
        return Diagnosis("", "the expected prompt itself: its tokenizer splits a special token's text the template "
                             "writes, in every engine alike; no way of making the prompt is at fault (see the "
                             "tokenizer's split_special_tokens, and the token's type)", stage="chat")
    conversation = Conversation.from_text(j.text, f"{j.corpus}/{j.case_id}")
    got = _backend_answer(j)
    if got.raised:
        return Diagnosis("", "the backend's template refused the conversation: a refusal reproduces no way of "
                             "making the prompt (its reason is the engine's own)", stage="chat")
    right = reference.answer(conversation)
    if _same(right, got):  # (regress: judged by stored prompts, which the template no longer makes)
        return Diagnosis("", "the backend's prompt is the one the model's template makes today: the stored prompts "
                             "were made from another template, tokenizer or tokparity (`regress --update` remakes "
                             "them once the change is reviewed)", stage="chat")
    until = time.monotonic() + SEARCH_SECONDS
    untried = 0
    encoded: dict[str, tuple[ChatVariant, ...] | None] = {}  # a text -> the way of encoding it that gives the backend's
    for size in range(0, MAX_AT_ONCE + 1):
        found: list[tuple[str, ...]] = []
        for variants in combinations(TEXT_VARIANTS, size):
            way = _combined(variants)
            if way is None:
                continue
            if time.monotonic() > until:
                return Diagnosis("", f"not found within {SEARCH_SECONDS:g} s: the search stopped after the ways of "
                                     f"{max(size - 1, 0)} cause(s) at once (a long prompt, a slow template)", stage="chat")
            try:
                text = reference.text(conversation, way)
            except (NotImplementedError, TemplateRaised):  # (a way not taken here, or a refusal: reproduces nothing)
                continue
            except CaseFailure:  # could not be rendered this way (too slow, too big): not tried
                untried += 1
                continue
            if got.text is not None and text != got.text:
                continue
            if text not in encoded:  # (many ways give the same text: each text is encoded once each way)
                encoded[text] = None
                for encoding in ENCODINGS:  # (the same text encoded otherwise: the smallest change first)
                    whole = _combined(variants + encoding)
                    if whole is None:
                        continue
                    try:
                        answer = reference.answer(conversation, whole)
                    except CaseFailure:  # (the oracle could not encode it: not tried)
                        untried += 1
                        continue
                    if _same(answer, got) and not _same(answer, right):
                        encoded[text] = encoding
                        break
            how = encoded[text]
            if how is not None:
                found.append(tuple(v.name for v in variants + how))
        if found:
            return _named(sorted(found, key=len), "ids" if got.ids is not None else "text")
    unrendered = f" ({untried} ways could not be rendered: not tried)" if untried else ""
    return Diagnosis("", f"no way of making the reference's prompt (up to {MAX_AT_ONCE} ways of writing its text at "
                         f"once, and of encoding it) gives the backend's prompt{unrendered}", stage="chat")


def _named(found: list[tuple[str, ...]], gave: str) -> Diagnosis:
    """The first set found names the cause; the others are its alternatives."""
    first, others = _in_order(found[0]), [_in_order(f) for f in found[1:]]
    does = "; and ".join(BY_NAME[n].does for n in first)
    also = f"; so do {', '.join('+'.join(f) for f in others)}" if others else ""
    return Diagnosis("+".join(first), f"reproduced: the reference's prompt made as an engine that {does} gives the "
                                      f"backend's {gave} exactly{also}", first, tuple(others), stage="chat")


def prefer_chat(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """One engine, one cause: where several sets reproduce a conversation, the smallest ones are
    weighed, and the one that reproduces the most of the engine's conversations names it.
    llama.cpp's built-in for a ChatML model is ChatML: an engine that falls back to ChatML on every
    model is named so on every row. (What the backend gave, ids or text, is read off the evidence
    the search wrote.)"""
    counts: dict[tuple[str, ...], int] = {}
    for d in diagnoses:
        for keys in (d.variants, *d.alternatives):
            counts[keys] = counts.get(keys, 0) + 1
    out = []
    for d in diagnoses:
        sets = [d.variants, *d.alternatives]
        if len(sets) < 2:
            out.append(d)
            continue
        gave = "ids" if "backend's ids exactly" in d.evidence else "text"
        out.append(_named(sorted(sets, key=lambda keys: (len(keys), -counts[keys])), gave))
    return out


def _in_order(names: tuple[str, ...]) -> tuple[str, ...]:
    """Cause names in the order the catalogue declares them."""
    return tuple(sorted(names, key=lambda n: ORDER[n]))
