"""Edits of the tools' JSON read off a backend's prompt: the value of ``chat.tools-edited``.

Each JSON object the right prompt writes for a tool is paired with the one the backend's prompt
writes in its place. Their difference is a list of keys set, changed or taken out, each in one
object of the tool. A rule (tokparity.chat.tool_edits) is learnt for each: it must pick exactly
the objects the edit was made in, among all the tools' objects. It is only a guess: the search
renders the conversation with the rules applied, and keeps them only where that gives the
backend's prompt exactly.
"""

from __future__ import annotations

import json
from typing import Any

from tokparity.chat.conversation import Conversation
from tokparity.chat.tool_edits import WHERE, changes

LONGEST_PROMPT = 200_000
_DECODER = json.JSONDecoder()


def read(right: str, got: str, conversation: Conversation) -> tuple[list[str], int]:
    """The rules (a JSON list, ``ChatWay.tools_edited``) that may turn the tools ``right`` writes
    into those ``got`` writes; and the characters read (the search's budget counts them). None
    where the prompts write other numbers of objects, or the tools differ otherwise."""
    if not conversation.tools or not right or not got or max(len(right), len(got)) > LONGEST_PROMPT:
        return [], 0
    tools = [t for tool in conversation.tools if isinstance(tool, dict)
             for t in (tool, tool.get("function")) if isinstance(t, dict)]
    mine, theirs = _objects(right), _objects(got)
    if len(mine) != len(theirs):
        return [], len(right) + len(got)
    edits: list[tuple[str, str, Any, dict]] = []  # (op, key, value, the object as the right prompt writes it)
    nodes: list[dict] = []
    for a, b in zip(mine, theirs):
        if a == b or a not in tools:
            continue
        if not _diff(a, b, edits):
            return [], len(right) + len(got)
        nodes += _dicts(a)
    if not edits:
        return [], len(right) + len(got)
    rules = _rules(edits, nodes)
    return ([json.dumps(rules, ensure_ascii=False)] if rules else []), len(right) + len(got)


def _objects(text: str) -> list[Any]:
    """The JSON objects ``text`` writes outside any other, in order."""
    out, at = [], text.find("{")
    while at >= 0:
        try:
            value, end = _DECODER.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        out.append(value)
        at = text.find("{", end)
    return out


def _dicts(value: Any) -> list[dict]:
    """Every object ``value`` holds, itself included."""
    if isinstance(value, list):
        return [d for v in value for d in _dicts(v)]
    if isinstance(value, dict):
        return [value, *(d for v in value.values() for d in _dicts(v))]
    return []


def _diff(a: Any, b: Any, edits: list[tuple[str, str, Any, dict]]) -> bool:
    """The keys ``b`` sets or takes out of the objects of ``a``, added to ``edits``. False where they
    differ otherwise (a list of another length, a value of another kind)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in b:
            if key not in a:
                edits.append(("set", key, b[key], a))
        for key in a:
            if key not in b:
                edits.append(("drop", key, None, a))
            elif isinstance(a[key], (dict, list)) and type(a[key]) is type(b[key]) and \
                    not (isinstance(a[key], list) and len(a[key]) != len(b[key])):
                if not _diff(a[key], b[key], edits):
                    return False
            elif a[key] != b[key]:
                edits.append(("set", key, b[key], a))
        return True
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return all(_diff(x, y, edits) for x, y in zip(a, b))
    return a == b


def _rules(edits: list[tuple[str, str, Any, dict]], nodes: list[dict]) -> list[dict] | None:
    """One rule for each kind of edit (its op, key and value), in the order first made; None where
    an edit fits no rule. A value that is the names of the object's properties is said so."""
    kinds: dict[str, tuple[dict, list[dict]]] = {}
    for op, key, value, node in edits:
        if op == "drop":
            rule: dict = {"key": key, "drop": True}
        elif isinstance(node.get("properties"), dict) and value == list(node["properties"]):
            rule = {"key": key, "value_of": "properties"}
        else:
            rule = {"key": key, "value": value}
        seen = kinds.setdefault(json.dumps(rule, sort_keys=True), (rule, []))
        seen[1].append(node)
    out = []
    for rule, made in kinds.values():
        ids = {id(n) for n in made}
        fits = [where for where in WHERE
                if all(changes(rule | {"where": where}, n) == (id(n) in ids) for n in nodes if WHERE[where](n))
                and all(WHERE[where](n) for n in made)]
        if not fits:
            return None
        out.append({"key": rule["key"], "where": fits[0],
                    **{k: v for k, v in rule.items() if k != "key"}})
    return out
