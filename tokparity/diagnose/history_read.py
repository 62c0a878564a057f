"""Messages written as the text of one, read off the backend's prompt: the value of
``chat.history-flattened``. A chat model driven through a text prompt gets the whole conversation
as one user message of ``Human: …`` and ``AI: …`` lines (a text model's chat wrapper, a
completion endpoint), or each past exchange as one system message.

The template is rendered with each group of messages (``message_edits.history_groups``) as one
message whose content marks where each message's content goes. The backend's prompt is read
along that render: the text before each content is its role's label (after the first, with the
separator before it), the text after a group's last content its end. A label read twice must
read the same. It is only a guess: the search renders the conversation with the value, and keeps
it only where that gives the backend's prompt exactly.
"""

from __future__ import annotations

import dataclasses
import json
import re
from os.path import commonprefix

from tokparity.chat.conversation import Conversation
from tokparity.chat.message_edits import HISTORY_GROUPS, history_groups
from tokparity.chat.reference import ChatReference
from tokparity.chat.way import TRANSFORMERS_WAY
from tokparity.errors import BackendTimeout, CaseFailure, TemplateRaised
from tokparity.textview import visible

MARK = re.compile("\ue020([0-9]+)\ue021")  # (where message k's content goes, in a group's text)
BECOMES = ("user", "system")  # (the role of the message a group becomes)
CLOSING = 6  # (characters of the template's text after a message that a label may not hold)


def _mark(k: int) -> str:
    return f"\ue020{k}\ue021"


def read(reference: ChatReference, conversation: Conversation, text: str) -> tuple[list[str], int]:
    """The values (JSON objects, ``ChatWay.flatten_history``) that may turn the conversation's
    prompt into the backend's ``text``; and the characters rendered (the search's budget)."""
    messages = conversation.messages
    if not messages or any(not isinstance(m.get("content"), str) for m in messages):
        return [], 0
    values: list[str] = []
    spent = 0
    for mode in HISTORY_GROUPS:
        groups = history_groups(messages, mode)
        if not any(written and (len(group) > 1 or mode == "all") for written, group in groups):
            continue  # (a message alone written as text is read only where every message is so written)
        for role in BECOMES:
            marked: list[dict] = []
            for written, group in groups:
                marked += [{"role": role, "content": "".join(map(_mark, group))}] if written else \
                    [messages[k] for k in group]
            try:
                made = reference.text(dataclasses.replace(conversation, messages=marked), TRANSFORMERS_WAY)
            except BackendTimeout:
                raise
            except (NotImplementedError, TemplateRaised, CaseFailure):
                continue
            spent += len(made)
            value = _read_along(made, text, messages, mode, role)
            if value is not None and value not in values:
                values.append(value)
    return values, spent


GAP = 64  # the most characters of a label or a separator (keeps the alignment's search short)
ANY = ".*?"  # (a head or an end: a preamble may be long, and the text after it is literal)


def _gap(named: set[str], name: str, form: str = rf".{{0,{GAP}}}?") -> str:
    """A pattern's group for the text ``name`` (a label, the separator): the same text where it stands again."""
    if name in named:
        return f"(?P={name})"
    named.add(name)
    return f"(?P<{name}>{form})"


def _read_along(made: str, text: str, messages: list[dict], mode: str, role: str) -> str | None:
    """The value read where ``made`` (the marked render) and the backend's ``text`` line up. The
    render is read as a pattern: its own text as it is, each content as it is, and a gap before
    each content (the head or the separator, then the role's label) and after each group (its
    end), each the same text wherever it stands again. ``_value`` then splits the gaps."""
    parts = MARK.split(made)  # (the text before a mark, the mark's message, the text after it, …)
    roles = {m["role"]: f"L{k}" for k, m in enumerate(messages)}
    # (a separator is whitespace where one is: "\n" between "Human: Hi" and "AI: Hello", not "\nAI: ")
    for sep in (rf"\s{{0,{GAP}}}", rf".{{0,{GAP}}}?"):
        pattern = [re.escape(parts[0])]
        named: set[str] = set()
        opens = True  # (the next content is the first of its group)
        for i in range(1, len(parts), 2):
            message, after = messages[int(parts[i])], parts[i + 1]
            lead = _gap(named, "head", ANY) if opens else _gap(named, "sep", sep)
            pattern += [f"(?P<g{i}>{lead}{_gap(named, roles[message['role']])})", re.escape(message["content"])]
            if after or i + 2 >= len(parts):  # (the group's end, then the template's text up to the next group)
                pattern += [_gap(named, "end", ANY) if after else "", re.escape(after)]
            opens = bool(after)
        found = re.fullmatch("".join(pattern), text, re.DOTALL)
        if found is not None:
            break
    else:
        return None
    first: dict[str, str] = {}
    later: dict[str, str] = {}
    opens = True
    for i in range(1, len(parts), 2):
        (first if opens else later).setdefault(messages[int(parts[i])]["role"], found.group(f"g{i}"))
        opens = bool(parts[i + 1])
    # (a text that holds the start of the template's own text after a message reads across two
    # messages the template wrote: the engine kept them apart, so no label is read)
    closing = {after[:CLOSING] for after in parts[2::2] if after}
    if any(c in value for c in closing for value in found.groupdict().values() if value):
        return None
    return _value(mode, role, first, later, found.group("end") if "end" in named else None)


def _value(mode: str, role: str, first: dict[str, str], later: dict[str, str], end: str | None) -> str | None:
    """The value of the gaps read: the separator is what the gaps before a later content share
    (its whitespace, where it holds some; or the whitespace that opens the one gap; unknown where
    no content is later in its group), each label what follows it; a first content's gap is the
    head and its label."""
    gaps = list(dict.fromkeys(later.values()))
    shared = commonprefix(gaps) if len(gaps) > 1 else ""
    spaces = re.match(r"\s*", shared if len(gaps) > 1 else gaps[0] if gaps else "").group()  # type: ignore[union-attr]
    sep = None if not gaps else spaces if spaces or len(gaps) == 1 else shared
    labels = {r: gap[len(sep or ""):] for r, gap in later.items()}
    heads = set()
    for r, gap in first.items():
        if r in labels:
            if not gap.endswith(labels[r]):
                return None
            heads.add(gap[:len(gap) - len(labels[r])])
    head = heads.pop() if len(heads) == 1 else "" if not heads else None
    if head is None or not all(gap.startswith(head) for gap in first.values()):
        return None
    labels |= {r: gap[len(head):] for r, gap in first.items() if r not in labels}
    return json.dumps({"mode": mode, "role": role, "head": head, "labels": dict(sorted(labels.items())), "sep": sep,
                       "end": end}, ensure_ascii=False)


def said(value: str) -> str:
    """The value in words: "writes every message as the text of one user message: each as its
    label ('Human: ', 'AI: ') and its content, joined by '\\n'"."""
    spec = json.loads(value)
    which = {"all": "every message",
             "history": "the messages after the system ones and before a last user message (all of them where none ends it)",
             "pairs": "each past user message and the reply after it"}[spec["mode"]]
    labels = ", ".join(f"{r} {visible(label)!r}" for r, label in spec["labels"].items())
    out = f"writes {which} as the text of one {spec['role']} message: each its label ({labels}) and its content"
    out += f", joined by {visible(spec['sep'])!r}" if spec["sep"] is not None else ""
    return out + (f", after {visible(spec['head'])!r}" if spec["head"] else "") + \
        (f", then {visible(spec['end'])!r}" if spec["end"] else "")


def merged(values: list[str]) -> str:
    """Values read off several rows as one, the most read first: the labels of the rows that read
    the same layout as the first (mode, role, head, and the separator and end where both rows know
    them), each role's first read kept; a separator or end one row did not know, another's."""
    first = json.loads(values[0])
    out = dict(first)
    labels: dict[str, str] = {}
    for value in values:
        spec = json.loads(value)
        if any(spec[k] != out[k] for k in ("mode", "role", "head")) or any(
                spec[k] is not None and out[k] is not None and spec[k] != out[k] for k in ("sep", "end")):
            continue
        out |= {k: spec[k] for k in ("sep", "end") if out[k] is None}
        labels |= {r: label for r, label in spec["labels"].items() if r not in labels}
    return json.dumps(out | {"labels": dict(sorted(labels.items()))}, ensure_ascii=False)
