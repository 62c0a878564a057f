"""The values of the chat causes read off the prompts, over an engine's rows, for its run-level
verdict (tokparity.diagnose.chat's ``chat_verdict``). Each row reads its own value
(tokparity.diagnose.chat_read); here they become the forms the verdict checks: the value most
rows read, the tools' rules of all rows at once, the characters rewritten joined."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import combinations

from tokparity.chat import ChatAnswer, tool_edits
from tokparity.chat.conversation import Conversation
from tokparity.chat.message_edits import DROP_RULES
from tokparity.chat.reference import ChatReference
from tokparity.chat.way import ChatWay
from tokparity.diagnose import content_chars, history_read, tools_edited
from tokparity.diagnose.chat_read import content_chars_variant, derived, drop_variant, tojson_variant
from tokparity.diagnose.chat_ways import CHAT_CAUSES, DERIVED, ChatVariant
from tokparity.errors import CaseFailure
from tokparity.records import Diagnosis

ADDED_FORMS = 8  # (the rules of a text added the verdict tries, most read first)
REWRITTEN = next(name for name, key in DERIVED.items() if key == "content_chars")  # (a table joined over rows)


def values_read(reference: ChatReference, rows: list[tuple[Conversation, ChatAnswer, Diagnosis] | None],
                gives: Callable[[Conversation, ChatAnswer, ChatWay], bool]) -> dict[str, tuple[ChatVariant, ...]]:
    """Each cause whose value is read off a prompt, with the value most of its rows read. The
    value's forms are tried in turn. The characters rewritten have a form per role scope: every
    role, or the user's. The scope most rows allow comes first. ``gives`` says whether a way gives
    a row's prompt exactly."""
    seen: dict[str, Counter[ChatVariant]] = {}
    # (each row's tables of characters rewritten that give its prompt, and the roles they are made for)
    tables: list[tuple[Conversation, list[tuple[str, str]]]] = []
    drops: list[list[str]] = []  # (each row's readings of the messages left out)
    for row in rows:
        if row is None:
            continue
        conversation, got, d = row
        # (a cause among a row's alternatives counts too: the run's verdict may choose it)
        names = set(d.variants) | {n for alt in d.alternatives for n in alt}
        if not names & DERIVED.keys():
            continue
        try:
            read, _rendered_chars = derived(reference, conversation, got, reference.answer(conversation))
        except CaseFailure:
            continue
        # (a text added: of the rules a row reads, those that alone give its prompt, where one does)
        added = [v for v in read if v.name in names and DERIVED[v.name] == "content_added"]
        giving = [v for v in added if gives(conversation, got, v.way())]
        for v in read:
            if v.name in names and DERIVED[v.name] != "content_chars" and (v not in added or not giving or v in giving):
                seen.setdefault(v.name, Counter())[v] += 1
        drops.append([str(dict(v.changes)["drop_where"]) for v in read if v.name in names and DERIVED[v.name] == "drop_where"])
        tables.append((conversation, [(str(dict(v.changes)["content_chars"]), str(dict(v.changes)["content_chars_roles"]))
                                      for v in read if v.name in names and DERIVED[v.name] == "content_chars"
                                      and gives(conversation, got, v.way())]))
    # (a tojson's traits joined: a row whose JSON holds no '/' shows no sign of escaping it)
    out: dict[str, tuple[ChatVariant, ...]] = {name: (_joined(name, counts),) for name, counts in seen.items()}
    # (a text added: each rule most rows read is a form, and the verdict keeps the one that changes
    # fewest agreements. The same text added always, or only where an option is set, reads alike)
    out |= {name: tuple(v for v, _ in counts.most_common(ADDED_FORMS)) for name, counts in seen.items()
            if DERIVED[name] in ("content_added", "blank_as", "fill_alternation", "append_as")}  # (each scope is a form too)
    # (messages left out: the rules all rows read at once, then each rule most rows read: two rules
    # may leave out the same messages of a row, and the verdict keeps the form that changes fewest agreements)
    out |= {name: tuple(dict.fromkeys((drop_variant(name, _fewest_rules(drops)), *(v for v, _ in counts.most_common(ADDED_FORMS)))))
            for name, counts in seen.items() if DERIVED[name] == "drop_where"}
    # (the tools' rules of all rows at once, or those most rows read: a rule read wrongly on one row
    # is left out of the second)
    out |= {name: tuple(dict.fromkeys((out[name][0], counts.most_common(1)[0][0]))) for name, counts in seen.items()
            if DERIVED[name] == "tools_edited"}
    # (the characters rewritten joined too: a row shows only those its contents hold. Two readings
    # of a text put in may both give a row's prompt: each row's is the one the others share)
    picked = content_chars.chosen([list(dict.fromkeys(v for v, _ in row)) for _, row in tables])
    forms = []
    for roles, _ in Counter(roles for _, row in tables for roles in {r for _, r in row}).most_common():
        table = content_chars.joined((value, "".join(content_chars.texts(c.messages, roles)))
                                     for value, (c, _) in zip(picked, tables))
        if table is not None:
            forms.append(content_chars_variant(REWRITTEN, table, roles))
    if forms:
        out[REWRITTEN] = tuple(forms)
    return out


def _joined(name: str, counts: Counter[ChatVariant]) -> ChatVariant:
    """The value of a cause read off several rows: the one most read, or for a tojson all the
    rows' traits joined (the tools' rules, a flattened history's labels likewise)."""
    if DERIVED[name] == "tojson":
        return tojson_variant(name, {t for v in counts for t in str(dict(v.changes)["tojson"]).split("+")})
    if DERIVED[name] == "tools_edited":  # (each row shows the rules its tools hold: all rows' rules at once)
        value = tools_edited.merged([str(dict(v.changes)["tools_edited"]) for v, _ in counts.most_common()])
        return ChatVariant(name, tool_edits.said(value), (("tools_edited", value),), CHAT_CAUSES[name]["fix"])
    if DERIVED[name] == "flatten_history":  # (each row shows the labels of the roles it holds: joined)
        value = history_read.merged([str(dict(v.changes)["flatten_history"]) for v, _ in counts.most_common()])
        return ChatVariant(name, history_read.said(value), (("flatten_history", value),), CHAT_CAUSES[name]["fix"])
    return counts.most_common(1)[0][0]


def _fewest_rules(rows: list[list[str]]) -> list[str]:
    """The fewest rules of messages left out that give each row one of its readings (a row whose
    readings are "repeat" or "later-system" is given by either), the most rows first."""
    readings = [[set(r.split("+")) for r in row] for row in rows if row]
    best: tuple[int, int, tuple[str, ...]] = (0, 0, ())
    for n in range(1, len(DROP_RULES) + 1):
        for rules in combinations(DROP_RULES, n):
            given = sum(any(r <= set(rules) for r in row) for row in readings)
            best = max(best, (given, -n, rules))
    return list(best[2])
