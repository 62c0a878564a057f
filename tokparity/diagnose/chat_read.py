"""Values read off a backend's prompt, for the chat causes whose value is the engine's own (the
text of a system message it adds, the whitespace after its headers, its tojson): the template is
rendered with a mark where the value lands, and the backend's prompt read there. The search
(tokparity.diagnose.chat) still proves each: a value read wrongly reproduces nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from itertools import combinations
from os.path import commonprefix

from tokparity.chat import ChatAnswer, tool_edits
from tokparity.chat.conversation import Conversation
from tokparity.chat.message_edits import (
    DROP_RULES,
    TOOLS_JSON,
    TOOLS_MARK,
    TOOLS_WRITTEN,
    alternation_filled,
    messages_dropped,
)
from tokparity.chat.reference import ChatReference
from tokparity.chat.render import TOJSON_TRAITS
from tokparity.chat.way import TRANSFORMERS_WAY, ChatWay, is_blank
from tokparity.diagnose import content_added, content_chars, content_cut, history_read, tools_edited
from tokparity.diagnose.chat_ways import CHAT_CAUSES, DECLARED_VALUES, DERIVED, ChatVariant
from tokparity.errors import BackendTimeout, CaseFailure, TemplateRaised

MARK = "\ue000"  # a private-use character, which no template writes: where a field's value lands
WHITESPACE_RUN = re.compile("[ \t\n]*")  # (what ChatWay.before_content rewrites)


def derived(reference: ChatReference, conversation: Conversation, got: ChatAnswer,
            right: ChatAnswer) -> tuple[tuple[ChatVariant, ...], int]:
    """The ways whose value is read off the backend's prompt, and the characters rendered to read
    them (the search's budget counts them). The template rendered with ``MARK`` where the value
    lands (the content of an added system message, the words raise_exception returns) says where
    to read it. The search still proves each: a value read wrongly reproduces nothing. Only a
    backend that gave its prompt's text can be read so."""
    if got.text is None:
        return (), 0
    out = []
    rendered = 0
    renamings: list[str] = []  # (each renaming of roles read off the prompt that no declared form makes)
    # (a format's own whitespace after each end of turn, read first: the other values are read off
    # a render that writes it so, a hand-written format's default system message among them)
    spacing = _after_end_read(reference, conversation, got.text, right.text)[0]
    base = TRANSFORMERS_WAY.changed(after_end=spacing) if spacing is not None else TRANSFORMERS_WAY
    for name, key in DERIVED.items():
        if key == "tojson":
            traits, chars = _tojson_read(reference, conversation, got.text, right.text)
            rendered += chars
            if traits is not None and traits not in DECLARED_VALUES.get(key, ()):
                out.append(tojson_variant(name, traits.split("+")))
            continue
        if key == "roles_as":
            pairs, chars = _roles_read(reference, conversation, got.text, right.text)
            rendered += chars
            # (each role read alone, and all of them at once: a client's own names for every role,
            # LangChain's `human` and `ai`, change each turn)
            for renamed in [[pair] for pair in pairs] + ([sorted(pairs)] if len(pairs) > 1 else []):
                spelt = " ".join(f"{role}={as_}" for role, as_ in renamed)
                if spelt in DECLARED_VALUES.get(key, ()):
                    continue
                renamings.append(spelt)
                does = " and ".join(f"every `{role}` message with the role `{as_}`" for role, as_ in renamed)
                those = "that role" if len(renamed) == 1 else "those roles"
                out.append(ChatVariant(name, f"sends {does}: the template renders {those} instead", ((key, spelt),),
                                       CHAT_CAUSES[name]["fix"]))
            continue
        if key in READERS:
            # (the whitespace after each end of turn is read once, above)
            value, chars = (spacing, 0) if key == "after_end" else READERS[key](reference, conversation, got.text,
                                                                                 right.text)
            rendered += chars
            if value is not None:
                entry = CHAT_CAUSES[name]
                out.append(ChatVariant(name, f"{entry['does']}: {value!r}", ((key, value),), entry["fix"]))
            continue
        if key == "drop_where":
            rules, chars = _drop_read(reference, conversation, got.text, base)
            rendered += chars
            out += [drop_variant(name, v) for v in rules]
            continue
        if key == "flatten_history":
            values, chars = history_read.read(reference, conversation, got.text)
            rendered += chars
            out += [ChatVariant(name, history_read.said(v), ((key, v),), CHAT_CAUSES[name]["fix"]) for v in values]
            continue
        if key == "tools_in_system":
            values, chars = _tools_read(reference, conversation, got.text, right.text)
            rendered += chars
            out += [ChatVariant(name, f"{CHAT_CAUSES[name]['does']}: {shown(v)!r}", ((key, v),), CHAT_CAUSES[name]["fix"])
                    for v in values]
            continue
        if key == "content_chars":
            values, chars = content_chars.read(right.text or "", got.text, content_chars.texts(conversation.messages))
            rendered += chars
            # (every role's contents, or the user's alone: a bot that escapes what users type)
            out += [content_chars_variant(name, v, roles) for v in values for roles in ("", "user")]
            continue
        if key in LEARNT_RULES:
            read_rule, say = LEARNT_RULES[key]
            values, chars = read_rule(right.text or "", got.text, conversation)
            rendered += chars
            out += [ChatVariant(name, say(v), ((key, v),), CHAT_CAUSES[name]["fix"]) for v in values
                    if not _holds_turn_end(reference, key, v)]
            continue
        if key == "tools_in_user":
            placed, chars = _tools_user_read(reference, conversation, got.text, right.text)
            rendered += chars
            out += [ChatVariant(name, f"{CHAT_CAUSES[name]['does']} ({which}): {shown(v)!r}",
                                ((key, v), ("tools_user", which)), CHAT_CAUSES[name]["fix"]) for which, v in placed]
            continue
        if key == "append_as":
            appended, chars = _appended_read(reference, conversation, got.text, base)
            rendered += chars
            # (where the request asks to continue, the message may be put on such requests only)
            scopes = ("", " where it is asked to continue it") if conversation.continue_final_message else ("",)
            out += [ChatVariant(name, f"{CHAT_CAUSES[name]['does']}{scope} ({role}): {text!r}",
                                ((key, json.dumps([role, text])),) + ((("append_on_continue", True),) if scope else ()),
                                CHAT_CAUSES[name]["fix"]) for role, text in appended for scope in scopes]
            continue
        if key == "fill_alternation":  # (each place a message is put: read where it puts the first)
            filled, chars = _filled_read(reference, conversation, got.text, base)
            rendered += chars
            out += [ChatVariant(name, f"{FILL_SCOPES[scope] or CHAT_CAUSES[name]['does']}: {value!r}",
                                ((key, value), ("fill_scope", scope)), CHAT_CAUSES[name]["fix"]) for scope, value in filled]
            continue
        if key == "system_default" and not any(m.get("role") == "system" for m in conversation.messages):
            marked = base.changed(system_default=MARK)
        elif key == "blank_as" and any(is_blank(m, "calls") for m in conversation.messages):
            marked = base.changed(blank_as=MARK, blank_scope="calls")
        elif key == "raise_exception" and right.raised:
            marked = base.changed(raise_exception=MARK + "{message}" + MARK)
        else:
            continue
        text = _rendered(reference, conversation, marked)
        if text is None:
            continue
        rendered += len(text)
        parts = text.split(MARK)
        if key == "raise_exception":  # (head, message, what follows up to the next call's message, …)
            value = _read_off(parts[:3], got.text) if len(parts) >= 3 and len(parts) % 2 and parts[2] else None
            value = value.replace(parts[1], "{message}", 1) if value is not None and parts[1] else value
        else:
            # (a message put in at several places: read at the first, the search renders it at each)
            value = _read_off(parts[:2], got.text) if len(parts) == 2 or key == "blank_as" else None
        if value is None or value in DECLARED_VALUES.get(key, ()):  # (the declared ways: tried already)
            continue
        entry = CHAT_CAUSES[name]
        if key == "blank_as":  # (every role's or the user's and the assistant's; with tool calls or not)
            out += [ChatVariant(name, f"{entry['does']}{BLANK_SCOPES[scope]}: {value!r}",
                                ((key, value), ("blank_scope", scope)), entry["fix"]) for scope in BLANK_SCOPES]
            continue
        out.append(ChatVariant(name, f"{entry['does']}: {value!r}", ((key, value),), entry["fix"]))
    again, chars = _rules_after_renaming(reference, conversation, got.text, renamings, out)
    return tuple(out) + again, rendered + chars


def _rules_after_renaming(reference: ChatReference, conversation: Conversation, text: str, renamings: list[str],
                          read: list[ChatVariant]) -> tuple[tuple[ChatVariant, ...], int]:
    """The rules learnt off the prompt again, each on the prompt made with the roles renamed as read.
    A text added to a message whose role the engine renamed too (a system message sent as a user's,
    ``[System]: `` before it) is read there: against the right prompt, the new role's name and the
    text added align as one change. With the characters rendered and aligned (the search's budget)."""
    seen = {v.changes for v in read}
    out: list[ChatVariant] = []
    spent = 0
    for spelt in renamings:
        again = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(roles_as=spelt))
        if again is None:
            continue
        spent += len(again)
        for name, key in DERIVED.items():
            if key not in LEARNT_RULES:
                continue
            read_rule, say = LEARNT_RULES[key]
            values, chars = read_rule(again, text, conversation)
            spent += chars
            for v in values:
                if ((key, v),) not in seen and not _holds_turn_end(reference, key, v):
                    seen.add(((key, v),))
                    out.append(ChatVariant(name, say(v), ((key, v),), CHAT_CAUSES[name]["fix"]))
    return tuple(out), spent


def _holds_turn_end(reference: ChatReference, key: str, value: str) -> bool:
    """Whether a text added to a content holds the template's end of turn: that is turns, not a text."""
    end = reference.turn_end().strip() if key == "content_added" else ""
    if not end:
        return False
    spec = json.loads(value)
    return any(end in str(spec.get(side, "")) for side in ("before", "after"))


# The rules learnt off a prompt: a ChatWay field -> how a rule is read off two prompts, and said in words.
LEARNT_RULES = {"tools_edited": (tools_edited.read, tool_edits.said), "content_cut": (content_cut.read, content_cut.said),
                "content_added": (content_added.read, content_added.said)}
# The messages a blank content is filled in: a scope (ChatWay.blank_scope) and its words
BLANK_SCOPES = {"": "", "calls": ", a message with tool calls too", "user assistant": ", of a user or assistant message",
                "user assistant calls": ", of a user or assistant message, with tool calls too"}
# Where a message is put to make the roles alternate (ChatWay.fill_scope), and its words ("": the cause's own)
FILL_SCOPES = {"": "", "runs": "puts a message of the other role before each message whose role is the one before's "
                               "(an assistant's after a user's, else a user's)",
               "users": "puts an assistant message between two user messages in a row"}
JOINERS = ("\n\n", "\n", " ", "")  # (what may join a text to a system message's content)


def _tools_read(reference: ChatReference, conversation: Conversation, text: str,
                right: str | None) -> tuple[list[str], int]:
    """The text the backend writes into the system message for the tools, with a mark where it
    writes their JSON, in each way of writing it that is found there; and the characters rendered to
    read it. With no system message first, the text would join one in any of ``JOINERS``: each is
    a value (the run's verdict takes the one most rows read). None where the text holds no tools' JSON.

    A way of writing the JSON that the template's own prompt holds is not read: that text is the
    template's (Qwen 3 writes its tools in its system turn), whatever else the backend added there."""
    if not conversation.tools:
        return [], 0
    made = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(tools_in_system=MARK))
    parts = made.split(MARK) if made is not None else []
    value = _read_off(parts, text) if len(parts) == 2 else None
    if not value:
        return [], len(made or "")
    found = [value.replace(json, f"{TOOLS_MARK}{name}{TOOLS_MARK}", 1)
             for name, write in TOOLS_JSON.items()
             if (json := write(conversation.tools)) in value and (right is None or json not in right)]
    found = list(dict.fromkeys(found))
    first = conversation.messages[0] if conversation.messages else {}
    if first.get("role") == "system" and isinstance(first.get("content"), str):
        return found, len(made or "")
    return [joiner + v for v in found for joiner in JOINERS], len(made or "")


def _tools_user_read(reference: ChatReference, conversation: Conversation, text: str, right: str | None
                     ) -> tuple[list[tuple[str, str]], int]:
    """The text the backend writes after the first or the last user message's content for the
    tools, with a mark where it writes their JSON, in each way of writing it found there; and the
    characters rendered to read it. Each value is paired with the user message it follows. A way
    of writing the JSON that the template's own prompt holds is not read (as ``_tools_read``)."""
    if not conversation.tools:
        return [], 0
    users = [i for i, m in enumerate(conversation.messages) if m.get("role") == "user"]
    out, rendered = [], 0
    for which in ("first", "last") if len(users) > 1 else ("first",):
        made = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(tools_in_user=MARK, tools_user=which))
        rendered += len(made or "")
        parts = made.split(MARK) if made is not None else []
        value = _read_off(parts, text) if len(parts) == 2 else None
        if value:
            out += [(which, value.replace(json, f"{TOOLS_MARK}{name}{TOOLS_MARK}", 1))
                    for name, write in TOOLS_JSON.items()
                    if (json := write(conversation.tools)) in value and (right is None or json not in right)]
    return list(dict.fromkeys(out)), rendered


def shown(value: str) -> str:
    """A text read off a prompt, with each mark of the tools' JSON written as ``{tools}``."""
    return TOOLS_WRITTEN.sub("{tools}", value)


def _generation_prompt_read(reference: ChatReference, conversation: Conversation, text: str,
                            right: str | None) -> tuple[str | None, int]:
    """What the backend writes in place of the template's generation prompt, and the characters
    rendered to read it: its prompt after the end of the template's prompt without one (found as
    ``_after`` finds it). None where no generation prompt is asked, or where that end is not found."""
    if right is None or not conversation.add_generation_prompt:
        return None, 0
    head = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(generation_prompt=False))
    at = _after(head, text) if head is not None else -1
    if head is None or at < 0 or not right.startswith(head):
        return None, len(head or "")
    own, template = text[at:], right[len(head):]
    # (none at all is chat.generation-prompt-missing's; a text far longer than the template's is the
    # rest of a prompt, not its generation prompt)
    return (own if own not in ("", template) and len(own) <= 2 * len(template) + 32 else None), len(head)


ROLE_NAME = re.compile(r"[A-Za-z][\w.-]{0,31}")  # (a role's name as an engine writes one)


RENAMED_AS = ("system", "user", "assistant", "tool", "developer")  # (the names a role may be sent as, where no mark is written)


def _roles_read(reference: ChatReference, conversation: Conversation, text: str,
                right: str | None) -> tuple[list[tuple[str, str]], int]:
    """Each role of the conversation with the name the backend writes where the template writes
    it, where that is another name; and the characters rendered to read them. The template is
    rendered with each role renamed to ``MARK``: the name is read where the first mark lands. A
    template that writes no role it does not know (Qwen 3's) leaves no mark: each of ``RENAMED_AS`` is
    then tried, and one is read where its prompt parts from the backend's later than the right one."""
    pairs, rendered = [], 0
    for role in dict.fromkeys(m.get("role") for m in conversation.messages):
        if not isinstance(role, str) or not role:
            continue
        marked = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(roles_as=f"{role}={MARK}"))
        rendered += len(marked or "")
        if marked is None or MARK not in marked:
            name, chars = _role_tried(reference, conversation, role, text, right)
            rendered += chars
            pairs += [(role, name)] if name else []
            continue
        head, rest = marked.split(MARK, 1)
        tail = rest.split(MARK, 1)[0][:16]
        at = _after(head, text)
        end = text.find(tail, at) if at >= 0 and tail else -1
        name = text[at:end] if end >= 0 else ""
        if name != role and ROLE_NAME.fullmatch(name):
            pairs.append((role, name))
    return pairs, rendered


def _role_tried(reference: ChatReference, conversation: Conversation, role: str, text: str,
                right: str | None) -> tuple[str, int]:
    """The first of ``RENAMED_AS`` that, sent for ``role``, explains where the prompts part: they part at
    the first message of that role, before its content ends, and with that role sent as the name
    the prompt agrees with the backend's up to that content at least (a text added before it may
    part them there). "" where none does; with the characters rendered."""
    first = next((k for k, m in enumerate(conversation.messages) if m.get("role") == role), None)
    if right is None or first is None:
        return "", 0
    parted = len(commonprefix([right, text]))
    span = _content_span(right, conversation, first)
    if span is None or not span[0] <= parted <= span[2]:
        return "", 0
    rendered = 0
    for name in RENAMED_AS:
        if name == role:
            continue
        again = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(roles_as=f"{role}={name}"))
        rendered += len(again or "")
        moved = _content_span(again, conversation, first) if again is not None else None
        if again is not None and moved is not None and _explained_to(again, text, moved, parted):
            return name, rendered
    return "", rendered


def _explained_to(again: str, text: str, span: tuple[int, int, int], parted: int) -> bool:
    """Whether a prompt made with a role renamed (``again``, the message's ``span`` in it) agrees
    with the backend's ``text`` past where the right one parted, through the message's header; and
    then holds its content, a short text put before it at most, and what follows it. The text put
    before may not hold the template's own text after a message: that reads across two messages."""
    agreed = len(commonprefix([again, text]))
    _, start, end = span
    if not agreed >= start > parted:
        return False
    if agreed >= end:  # (the renaming alone explains the message, or the whole prompt)
        return True
    content, after = again[start:end], again[end:end + 16]
    at = text.find(content, agreed)
    return 0 <= at - agreed <= content_added.LONGEST_ADDED and text.startswith(after, at + len(content)) and \
        (not after or after[:history_read.CLOSING] not in text[agreed:at])


def _content_span(prompt: str, conversation: Conversation, k: int) -> tuple[int, int, int] | None:
    """Where the header of message ``k`` starts (the end of the content before it), where its
    content starts and where it ends, in ``prompt``; None where its content is not found there."""
    found = {m: (start, end) for m, start, end in content_added.spans(prompt, conversation.messages)}
    if k not in found:
        return None
    before = max((end for m, (_, end) in found.items() if m < k), default=0)
    return before, found[k][0], found[k][1]


def _after(head: str, text: str) -> int:
    """Where ``head``'s end is in ``text``: ``text`` starts with it, or holds its last 16 (else 8)
    characters as often as ``head`` does (a BOS or a header written otherwise before it does not
    hide it); -1 where not found.

    >>> _after("<s>[INST] Hi [/INST]", "<s>[INST] Hi [/INST] Hello"), _after("<s>[INST] Hi [/INST]", "[INST] Hi [/INST]")
    (20, 17)
    >>> _after("<s><|user|>", "<|user|>Hi")
    8
    """
    if text.startswith(head):
        return len(head)
    for anchor in dict.fromkeys((head[-16:], head[-8:])):
        at = -1
        for _ in range(head.count(anchor) if anchor else 0):
            at = text.find(anchor, at + 1)
            if at < 0:
                break
        if at >= 0:
            return at + len(anchor)
    return -1


def _before_content_read(reference: ChatReference, conversation: Conversation, text: str,
                         right: str | None) -> tuple[str | None, int]:
    """The whitespace the backend writes between the first marked message's header and its content,
    and the characters rendered to read it (the header's end found as ``_after`` finds it). None
    where it is the template's own whitespace. Where the template refuses the conversation, it is
    read off the prompt the template makes with its checks skipped (an engine that checks nothing)."""
    unchecked = {"raise_exception": ""} if right is None else {}
    marked = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(before_content=MARK, **unchecked))
    if right is None and marked is not None:
        right = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(**unchecked))
        marked = marked if right is not None else None
    if right is None or marked is None or MARK not in marked:
        return None, len(marked or "")
    head = marked.split(MARK, 1)[0]
    at = _after(head, text)
    if at < 0 or not right.startswith(head):
        return None, len(marked)
    # (a content's own leading whitespace, marked where the template trims none, is not the header's)
    lead = _run_at(marked, len(head) + len(MARK))
    own, its = (run[:len(run) - len(lead)] if lead and run.endswith(lead) else run
                for run in (_run_at(text, at), _run_at(right, len(head))))
    return (None if own == its else own), len(marked) + (len(right) if unchecked else 0)


def _after_end_read(reference: ChatReference, conversation: Conversation, text: str,
                    right: str | None) -> tuple[str | None, int]:
    """The whitespace the backend writes after each end of turn (the template's ``turn_end``). It
    is read where the backend writes one and the same after every one, and the template another.
    No character is rendered to read it: the end of turn is known once per template."""
    end = reference.turn_end().rstrip(" \t\n")
    if not end or right is None or end not in text:
        return None, 0
    runs = {_run_at(text, found.end()) for found in re.finditer(re.escape(end), text)}
    its = {_run_at(right, found.end()) for found in re.finditer(re.escape(end), right)}
    return (runs.pop() if len(runs) == 1 and runs != its else None), 0


# The ways whose value is one text read off the prompt: a ChatWay field -> how it is read.
READERS = {"generation_prompt_as": _generation_prompt_read, "before_content": _before_content_read,
           "after_end": _after_end_read}


def _drop_read(reference: ChatReference, conversation: Conversation, text: str,
               base: ChatWay) -> tuple[list[str], int]:
    """The rules (one of DROP_RULES, or two at once) whose messages left out give the backend's
    prompt exactly, and the characters rendered to find them. Two rules may leave out the same
    messages of this conversation: each is read, and the run's verdict tells them apart."""
    found: list[str] = []
    made_by: dict[tuple[int, ...], str | None] = {}  # (the messages left: rendered once)
    spent = 0
    for rules in [*DROP_RULES, *("+".join(pair) for pair in combinations(DROP_RULES, 2))]:
        left = messages_dropped(conversation.messages, rules)
        key = tuple(map(id, left))
        if len(left) in (0, len(conversation.messages)):
            continue
        if key not in made_by:
            made_by[key] = _rendered(reference, conversation, base.changed(drop_where=rules))
            spent += len(made_by[key] or "")
        if made_by[key] == text:
            found.append(rules)
    return found, spent


def _filled_read(reference: ChatReference, conversation: Conversation, text: str,
                 base: ChatWay) -> tuple[list[tuple[str, str]], int]:
    """Each place a message is put to make the roles alternate (FILL_SCOPES), with the text the
    backend writes in the first such message, where its prompt holds one; and the characters
    rendered to read them. A text a declared way writes is left to it."""
    found, spent = [], 0
    for scope in FILL_SCOPES:
        if alternation_filled(conversation.messages, "", scope) == conversation.messages:
            continue
        marked = _rendered(reference, conversation, base.changed(fill_alternation=MARK, fill_scope=scope))
        spent += len(marked or "")
        parts = marked.split(MARK) if marked is not None else []
        value = _read_off(parts[:2], text) if len(parts) >= 2 else None
        if value is not None and value not in DECLARED_VALUES.get("fill_alternation", ()):
            found.append((scope, value))
    return found, spent


def _appended_read(reference: ChatReference, conversation: Conversation, text: str,
                   base: ChatWay) -> tuple[list[tuple[str, str]], int]:
    """Each role, with the content of a message of that role the backend puts after the last one,
    where its prompt holds one: the template is rendered with a marked message after the others
    (the last one closed, not continued), and the text read where the mark lands. With the
    characters rendered to read them."""
    found, spent = [], 0
    for role in APPENDED_ROLES:
        marked = _rendered(reference, conversation, base.changed(append_as=json.dumps([role, MARK]), continue_final="never"))
        spent += len(marked or "")
        parts = marked.split(MARK) if marked is not None else []
        value = _read_off(parts, text) if len(parts) == 2 else None
        if value and len(value) <= APPENDED_LONGEST:
            found.append((role, value))
    return found, spent


APPENDED_ROLES = ("system", "user")
APPENDED_LONGEST = 2000  # (characters: a longer text is the rest of another prompt, not a message put in)


def _run_at(text: str, at: int) -> str:
    """The run of spaces, tabs and newlines that starts at ``at`` ("" where none does)."""
    found = WHITESPACE_RUN.match(text, at)
    return found.group() if found else ""


def _rendered(reference: ChatReference, conversation: Conversation, way: ChatWay) -> str | None:
    """The reference's prompt made ``way``; None where that way makes none (refused, not taken
    here, too big to render). A timeout stops the search: it is raised."""
    try:
        return reference.text(conversation, way)
    except BackendTimeout:
        raise
    except (NotImplementedError, TemplateRaised, CaseFailure):
        return None


def _tojson_read(reference: ChatReference, conversation: Conversation, text: str,
                 right: str | None) -> tuple[str | None, int]:
    """The traits of a tojson (TOJSON_TRAITS) whose prompt comes closest to the backend's ``text``,
    the fewest first, where one comes closer than the right prompt ``right``; None where none
    does, or where the conversation's prompt writes no JSON a trait changes. Closest: the most
    characters shared at the start and the end. Then the characters rendered to find them."""
    def closeness(candidate: str) -> int:
        if candidate == text:  # (the prompt itself: closer than any near one that shares as much)
            return len(text) + 1
        head = len(commonprefix([candidate, text]))
        return head + min(len(commonprefix([candidate[::-1], text[::-1]])), min(len(candidate), len(text)) - head)

    rendered = 0

    def render(traits: tuple[str, ...]) -> str | None:
        nonlocal rendered
        made = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(tojson="+".join(traits)))
        rendered += len(made or "")
        return made

    if right is None or render(TOJSON_TRAITS) in (None, right):
        return None, rendered
    best, best_traits = closeness(right), None
    # (a trait that alone changes nothing here, no '/' to escape, is left out of the combinations)
    singles = {trait: render((trait,)) for trait in TOJSON_TRAITS}
    useful = [trait for trait, made in singles.items() if made is not None and made != right]
    for size in range(1, len(useful) + 1):
        for traits in combinations(useful, size):
            candidate = singles[traits[0]] if size == 1 else render(traits)
            if candidate is not None and closeness(candidate) > best:
                best, best_traits = closeness(candidate), traits
    return ("+".join(best_traits) if best_traits else None), rendered


_TRAIT_WORDS = {"compact": "no space after ',' and ':'", "ascii": "non-ASCII as \\uXXXX", "slash": "'/' as '\\/'",
                "html": "'<', '>' and '&' escaped", "apostrophe": "\"'\" as \\u0027", "sorted": "its keys sorted"}


def tojson_variant(name: str, traits: Iterable[str]) -> ChatVariant:
    """The tojson of these traits, in words: "writes tojson's JSON with its keys sorted"."""
    ordered = [t for t in TOJSON_TRAITS if t in set(traits)]
    words = [_TRAIT_WORDS[t] for t in ordered]
    said = ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]
    return ChatVariant(name, f"writes tojson's JSON with {said}", (("tojson", "+".join(ordered)),), CHAT_CAUSES[name]["fix"])


def drop_variant(name: str, rules: Iterable[str]) -> ChatVariant:
    """The messages these rules pick left out, in words (DROP_RULES' names, each alone or joined by "+")."""
    ordered = [r for r in DROP_RULES if r in {n for v in ([rules] if isinstance(rules, str) else rules)
                                            for n in v.split("+")}]
    return ChatVariant(name, "leaves out " + " and ".join(DROP_RULES[r] for r in ordered), (("drop_where", "+".join(ordered)),),
                       CHAT_CAUSES[name]["fix"])


def content_chars_variant(name: str, value: str, roles: str = "") -> ChatVariant:
    """The contents' characters written as the table ``value`` says, in words; ``roles``: only
    the contents of messages of these roles ("": of all)."""
    entry = CHAT_CAUSES[name]
    whose = f" ({roles} messages only)" if roles else ""
    return ChatVariant(name, f"{entry['does']}{whose}: {content_chars.said(value)}",
                       (("content_chars", value), ("content_chars_roles", roles)), entry["fix"])


def _read_off(parts: list[str], text: str) -> str | None:
    """What ``text`` holds where the marked render has its marks: the text between the render's
    head (before the first mark; its end found as ``_after`` finds it, a BOS left out of the text
    before it) and the start of its tail (after the last)."""
    head, tail = parts[0], parts[-1]
    at = _after(head, text)
    if at < 0:
        return None
    if not tail:
        return text[at:]
    end = text.find(tail[:16], at)
    return text[at:end] if end >= 0 else None
