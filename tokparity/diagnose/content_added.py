"""Text an engine puts before or after some messages' contents, read off its prompt: the value of
``chat.content-added``. Qwen 3's soft switch is one: `` /no_think`` after the last user message,
written by a front end in place of the ``enable_thinking`` option. A date before the system
message, or an instruction after every user message, are others.

The right prompt and the backend's are aligned (``content_chars.aligned``). Each text put in
where a content of the right prompt starts or ends is read as added to that message. The
messages that got one text must be the ones a rule picks: every message, every one of a role,
or the first or last of a role. It is only a guess: the search renders the conversation with the
text added, and keeps it only where that gives the backend's prompt exactly.
"""

from __future__ import annotations

import json

from tokparity.chat.conversation import OWN_OPTIONS, Conversation
from tokparity.chat.message_edits import CONTENT
from tokparity.diagnose.content_chars import LONGEST_PROMPT, aligned
from tokparity.textview import visible

LONGEST_ADDED = 400  # (characters: a longer text put in is a whole instruction, read as tools or a system turn)
# The rules that pick messages: (role, which); "" is any role, None the role of the messages picked.
PICKS = (("", "each"), (None, "each"), (None, "last"), (None, "first"), ("", "last"), ("", "first"))


def read(right: str, got: str, conversation: Conversation) -> tuple[list[str], int]:
    """The values (JSON objects, ``ChatWay.content_added``) that may turn ``right`` into ``got``;
    and the characters aligned (the search's budget counts them). Each rule read off the prompt
    comes first as it is, then once for each option of the conversation the text may stand for."""
    found, blocks = contents_aligned(right, got, conversation)
    if not blocks:
        return [], len(right) + len(got) if found else 0
    added: dict[int, list[str]] = {}  # message -> [text before its content, text after it]
    for tag, i1, _, j1, j2 in blocks:
        if tag != "insert" or j2 - j1 > LONGEST_ADDED:
            continue
        hit = _landed(right, i1, got[j1:j2], found)
        if hit is not None:
            k, side, text = hit
            added.setdefault(k, ["", ""])[side] += text
    # (a text that holds the content itself is read with a mark there too: Open WebUI's system
    # prompt added once more before its own content is the content, whatever the content is)
    contents = {k: conversation.messages[k]["content"] for k in added}
    marked = {k: [text.replace(contents[k], CONTENT) for text in texts] for k, texts in added.items()
              if len(contents[k].strip()) >= 3 and any(contents[k] in text for text in texts)}
    values = []
    for (before, after), picked in [*_grouped(added | marked).items(), *(_grouped(added).items() if marked else ())]:
        for role, which in _rules(conversation.messages, picked, {k for k, _, _ in found}):
            # (a list of parts left as it is, or given the text in a text part: the prompts of
            # string contents cannot tell, the verdict's agreements may)
            for spec in ({"role": role, "which": which, "before": before, "after": after},
                         {"role": role, "which": which, "before": before, "after": after, "parts": True}):
                values.append(json.dumps(spec, ensure_ascii=False))
                values += [json.dumps(spec | {"when": [name, value]}, ensure_ascii=False)
                           for name, value in conversation.options.items()
                           if name not in OWN_OPTIONS and isinstance(value, (bool, int, str))]
    return values, len(right) + len(got)


def said(value: str) -> str:
    """The text a value adds, and where, in words: "puts ' /no_think' after the content of the last
    user message, where the option enable_thinking is false, and never passes enable_thinking to the
    template"."""
    spec = json.loads(value)
    texts = [f"{visible(spec[side].replace(CONTENT, '{content}'))!r} {side}" for side in ("before", "after") if spec[side]]
    whose = f"{spec['role']} message" if spec["role"] else "message"
    which = {"each": f"every {whose}", "first": f"the first {whose}", "last": f"the last {whose}"}[spec["which"]]
    out = f"puts {' and '.join(texts)} the content of {which}"
    if spec.get("parts"):
        out += " (in a list of parts, its first or last text part)"
    if "when" in spec:
        name, wanted = spec["when"]
        out += f", where the option {name} is {json.dumps(wanted)}, and never passes {name} to the template"
    return out


def contents_aligned(right: str, got: str, conversation: Conversation
                     ) -> tuple[list[tuple[int, int, int]], list[tuple[str, int, int, int, int]] | None]:
    """Where each string content stands in the right prompt (``spans``), and where the two prompts
    part (``content_chars.aligned``); none of either for prompts too long to align."""
    if not right or not got or max(len(right), len(got)) > LONGEST_PROMPT:
        return [], None
    found = spans(right, conversation.messages)
    return found, aligned(right, got) if found else None


def spans(right: str, messages: list[dict]) -> list[tuple[int, int, int]]:
    """Where each message's string content stands in the right prompt: (message, start, end). Each
    is looked for after the one before, as it is or stripped (a template that trims)."""
    out, at = [], 0
    for k, m in enumerate(messages):
        content = m.get("content")
        if not isinstance(content, str):
            continue
        for needle in dict.fromkeys((content, content.strip())):
            found = right.find(needle, at) if needle else -1
            if found >= 0:
                out.append((k, found, found + len(needle)))
                at = found + len(needle)
                break
    return out


def _landed(right: str, at: int, text: str, found: list[tuple[int, int, int]]) -> tuple[int, int, str] | None:
    """A text put in at ``at`` of the right prompt as (message, 0 before its content or 1 after
    it, the text), where it lands at a content's start or end. The same text put in a place to
    the left or right reads the same (`` x`` after ``a `` is ``x `` after ``a``): each is tried."""
    slides = [(at, text)]
    q, t = at, text
    while q > 0 and right[q - 1] == t[-1]:
        q, t = q - 1, right[q - 1] + t[:-1]
        slides.append((q, t))
    q, t = at, text
    while q < len(right) and right[q] == t[0]:
        q, t = q + 1, t[1:] + right[q]
        slides.append((q, t))
    for q, t in slides:
        for k, start, end in found:
            if q == end:
                return k, 1, t
            if q == start:
                return k, 0, t
    return None


def _grouped(added: dict[int, list[str]]) -> dict[tuple[str, str], set[int]]:
    """The messages that got each pair of texts (before, after)."""
    out: dict[tuple[str, str], set[int]] = {}
    for k, (before, after) in added.items():
        out.setdefault((before, after), set()).add(k)
    return out


def _rules(messages: list[dict], picked: set[int], seen: set[int]) -> list[tuple[str, str]]:
    """Each rule (role, which) that picks exactly ``picked`` among the messages whose content was
    found (``seen``). Several may fit one conversation (every message, every user message): the
    run's verdict takes the one most rows read."""
    roles = {messages[k].get("role") for k in picked}
    out: list[tuple[str, str]] = []
    for pick, which in PICKS:
        role = pick if pick is not None else next(iter(roles)) if len(roles) == 1 else None
        if not isinstance(role, str):
            continue
        chosen = [k for k, m in enumerate(messages) if not role or m.get("role") == role]
        chosen = chosen[:1] if which == "first" else chosen[-1:] if which == "last" else chosen
        if {k for k in chosen if k in seen} == picked and (role, which) not in out:
            out.append((role, which))
    return out
