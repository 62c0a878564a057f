"""A long content cut short with a note, read off a backend's prompt: the value of
``chat.content-cut``. Agent frameworks do this to a tool's output: they keep its last characters
after a note ("Output truncated. Showing the last 2000 characters."), or its first and last
ones with a note between.

The right prompt and the backend's are aligned (``content_chars.aligned``). Each content of the
right prompt is found in the backend's where the two agree around it. Where the backend's holds
the content's start, a note and its end, and less of it than the content, the rule is: a
content of that role longer than the start and end kept becomes them, with the note between. It
is only a guess: the search renders the conversation with the rule, and keeps it only where
that gives the backend's prompt exactly.
"""

from __future__ import annotations

import json
from os.path import commonprefix

from tokparity.chat.conversation import Conversation
from tokparity.diagnose.content_added import contents_aligned
from tokparity.textview import visible

LONGEST_NOTE = 400  # (characters: a longer text in a content's place is another content, not a note)
MOST_KEPT_OUT = 32  # (characters a cut takes out at least: fewer is an edit, not a cut to fit)


def read(right: str, got: str, conversation: Conversation) -> tuple[list[str], int]:
    """The rules (JSON objects, ``ChatWay.content_cut``) that may turn ``right`` into ``got``; and
    the characters aligned (the search's budget counts them)."""
    found, blocks = contents_aligned(right, got, conversation)
    if not blocks:
        return [], len(right) + len(got) if found else 0
    values = []
    for k, start, end in found:
        at, to = _got_at(blocks, start, False), _got_at(blocks, end, True)
        if at is None or to is None or to < at:
            continue
        content, written = right[start:end], got[at:to]
        head = len(commonprefix([content, written]))
        tail = len(commonprefix([content[head:][::-1], written[head:][::-1]]))
        note = written[head:len(written) - tail]
        role = conversation.messages[k].get("role")
        # (a cut keeps some of the content and takes out more than its note puts in: a content
        # stripped, emptied or with a word replaced is no cut)
        cut = len(content) - head - tail
        if head + tail and cut > max(len(note), MOST_KEPT_OUT) and len(note) <= LONGEST_NOTE and isinstance(role, str):
            value = json.dumps({"role": role, "head": head, "tail": tail, "note": note}, ensure_ascii=False)
            if value not in values:
                values.append(value)
    return values, len(right) + len(got)


def said(value: str) -> str:
    """A rule in words: "cuts a tool message's content longer than 2000 characters to its last
    2000, after 'Output truncated.'"."""
    spec = json.loads(value)
    head, tail, note = spec["head"], spec["tail"], visible(spec["note"])
    kept = " and ".join(f"its {side} {n}" for side, n in (("first", head), ("last", tail)) if n)
    where = f"after {note!r}" if not head and note else f"before {note!r}" if not tail and note else \
        f"with {note!r} between" if note else "with nothing between"
    return f"cuts a {spec['role']} message's content longer than {head + tail} characters to {kept}, {where}"


def _got_at(blocks: list[tuple[str, int, int, int, int]], at: int, end: bool) -> int | None:
    """Where the character ``at`` of the right prompt stands in the backend's: past the places
    where the two part before it. A text put in just at ``at`` is the content's: after ``at``
    where ``at`` is a content's start, before it where ``at`` is its end. None where ``at`` lies
    inside a place where they part."""
    shift = 0
    for _, i1, i2, j1, j2 in blocks:
        if i2 < at or i1 < i2 == at or (i1 == i2 == at and end):
            shift = j2 - i2
        elif i1 < at < i2:
            return None
        else:
            break
    return at + shift
