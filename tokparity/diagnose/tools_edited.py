"""Edits of the tools' JSON read off a backend's prompt: the value of ``chat.tools-edited``.

Each JSON object the right prompt writes for a tool is paired with the one the backend's prompt
writes in its place. Their difference is a list of keys set, changed, renamed or taken out, each
in one object of the tool. A rule (tokparity.chat.tool_edits) is learnt for each: it must pick
exactly the objects the edit was made in, among all the tools' objects. Where an object's keys
come in another order, the objects at that place are read as a typed struct's: its fields, in
its order. It is only a guess: the search renders the conversation with the rules applied, and
keeps them only where that gives the backend's prompt exactly.
"""

from __future__ import annotations

import json
from typing import Any

from tokparity.chat.conversation import Conversation
from tokparity.chat.tool_edits import WHERE, apply, place_of, places, property_map

LONGEST_PROMPT = 200_000
SORTED = "sorted"  # (the place of a pair that says a map of the object is written with its keys sorted)
_DECODER = json.JSONDecoder()


def read(right: str, got: str, conversation: Conversation) -> tuple[list[str], int]:
    """The rules (a JSON list, ``ChatWay.tools_edited``) that may turn the tools ``right`` writes
    into those ``got`` writes; and the characters read (the search's budget counts them). None
    where the prompts write other numbers of objects, or an edit fits no rule."""
    if not conversation.tools or not right or not got or max(len(right), len(got)) > LONGEST_PROMPT:
        return [], 0
    tools = [t for tool in conversation.tools if isinstance(tool, dict)
             for t in (tool, tool.get("function")) if isinstance(t, dict)]
    mine, theirs = _objects(right), _objects(got)
    spent = len(right) + len(got)
    if len(mine) != len(theirs):
        return [], spent
    pairs: list[tuple[dict, dict, str]] = []  # (an object as the right prompt writes it, the backend's, its place)
    nodes: list[tuple[dict, str]] = []
    changed = [(a, b) for a, b in zip(mine, theirs) if _differ(a, b) and a in tools]
    if changed and all(json.dumps(b) == json.dumps(a, sort_keys=True) for a, b in changed):
        return [], spent  # (every key sorted: a tojson or a client that sorts all JSON, declared causes)
    for a, b in changed:
        place = "tool" if a in conversation.tools else "function"
        _paired(a, b, place, pairs)
        nodes += list(places(a, place))
    # (an object the backend left out with its parent says nothing of the rules)
    seen = {id(a) for a, _, _ in pairs}
    pairs = [(a, b, place) for a, b, place in pairs if _differ(a, b)]
    if not pairs:
        return [], spent
    rules = _rules(pairs, [(n, place) for n, place in nodes if id(n) in seen])
    return ([json.dumps(rules, ensure_ascii=False)] if rules else []), spent


def _objects(text: str) -> list[Any]:
    """The JSON objects ``text`` writes outside any other, in order."""
    out, at = [], text.find("{")
    while at >= 0:
        try:
            value, end = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):  # (not JSON, or JSON too deep to read)
            at = text.find("{", at + 1)
            continue
        out.append(value)
        at = text.find("{", end)
    return out


def _paired(a: Any, b: Any, place: str, pairs: list[tuple[dict, dict, str]]) -> None:
    """Each object of ``a`` paired with the backend's at the same place, added to ``pairs``, the
    outer ones first. A value changed, or a list of another length, is left to the rule of its
    object's key; a map written with its keys sorted is a pair of its own (``SORTED``)."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for x, y in zip(a, b):
            _paired(x, y, "", pairs)
        return
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return
    pairs.append((a, b, place))  # (an object the same on both sides too: a rule must leave it so)
    for key in [k for k in a if k in b]:  # (in the object's order: the rules come out in one order)
        x, y = a[key], b[key]
        if property_map(key, x, place) and isinstance(y, dict):
            for k in [k for k in x if k in y]:
                _paired(x[k], y[k], "property", pairs)
            if list(x) != list(y) and list(y) == sorted(y):  # (a map written in sorted order: Go's)
                pairs.append((a, {key: dict(sorted(x.items()))}, SORTED))
        elif isinstance(x, (dict, list)) and type(x) is type(y):
            _paired(x, y, place_of(key, place), pairs)


def _rules(pairs: list[tuple[dict, dict, str]], nodes: list[tuple[dict, str]]) -> list[dict] | None:
    """The rules that turn each object of ``pairs`` into the backend's: a struct for each place
    where keys come in another order, then one rule for each kind of edit (its op, key and value)
    in the order first made. None where an edit fits no rule."""
    structs = {place for a, b, place in pairs if place and place != SORTED and not _in_order(a, b)}
    out = [rule for place in sorted(structs) if (rule := _struct(place, pairs, nodes)) is not None]
    if len(out) < len(structs):
        return None
    kinds: dict[str, tuple[dict, list[int]]] = {}
    for a, b, place in pairs:
        if place in structs:
            continue
        edits = [{"key": key, "sorted": True} for key in b] if place == SORTED else _edits(a, b)
        for rule in edits:
            kinds.setdefault(json.dumps(rule, sort_keys=True), (rule, []))[1].append(id(a))
    for rule, made in kinds.values():
        picked = set(made)
        # (a key set where it was missing: set only where it is missing, or in every object picked)
        forms = [{"key": rule["key"], "default": rule["value"]}, rule] if "value" in rule else [rule]
        fits = [(where, form) for form in forms for where, test in WHERE.items()
                if all(_differ(apply(form, n, n), n) == (id(n) in picked) for n, place in nodes if test(n, place))
                and all(test(n, place) for n, place in nodes if id(n) in picked)]
        if not fits:
            return None
        where, form = fits[0]
        out.append({"key": form["key"], "where": where, **{k: v for k, v in form.items() if k != "key"}})
    return out


def _in_order(a: dict, b: dict) -> bool:
    """Whether ``b`` keeps ``a``'s keys in their order (a key renamed in its place), new ones last."""
    renamed = {new: old for old in a if old not in b for new in b if new not in a and b[new] == a[old]}
    mapped = [renamed.get(k, k) for k in b]
    kept = [k for k in mapped if k in a]
    return kept == [k for k in a if k in mapped] and mapped[:len(kept)] == kept


def _differ(x: dict, y: dict) -> bool:
    """Whether two objects differ, their keys' order too."""
    return json.dumps(x) != json.dumps(y)


def _edits(a: dict, b: dict) -> list[dict]:
    """The keys ``b`` sets, renames or takes out of ``a``, each as a rule without its ``where``."""
    gone = [k for k in a if k not in b]
    new = [k for k in b if k not in a]
    out: list[dict] = []
    for key in gone:
        twin = next((k for k in new if b[k] == a[key]), None)
        if twin is not None:
            out.append({"key": key, "rename": twin})
            new.remove(twin)
        else:
            out.append({"key": key, "drop": True})
    for key in [*new, *(k for k in a if k in b and not isinstance(a[k], (dict, list)) and a[k] != b[k]),
                *(k for k in a if k in b and isinstance(a[k], list) and len(a[k]) != len(b[k]))]:
        if isinstance(a.get("properties"), dict) and b[key] == list(a["properties"]):
            out.append({"key": key, "value_of": "properties"})
        else:
            out.append({"key": key, "value": b[key]})
    return out


def _struct(place: str, pairs: list[tuple[dict, dict, str]], nodes: list[tuple[dict, str]]) -> dict | None:
    """The typed struct of the objects at ``place``: the keys the backend writes, in its order, and
    the value it writes for a key the request left out (one value, or it is no struct's zero
    value). None where the objects' keys give no one order, or the struct would change an object
    the backend left as it is."""
    fields: list[str] = []
    defaults: dict[str, Any] = {}
    for a, b, at in pairs:
        if at != place:
            continue
        for k in b:
            if k not in a and defaults.setdefault(k, b[k]) != b[k]:
                return None
        merged = [k for k in fields if k in b]
        if merged != [k for k in b if k in fields]:
            return None
        fields = _merged(fields, list(b))
    rule = {"where": place, "fields": fields, **({"defaults": defaults} if defaults else {})}
    changed = {id(a): list(b) for a, b, at in pairs if at == place}
    for n, at in nodes:
        if at == place and list(apply(rule, n, n)) != changed.get(id(n), list(n)):
            return None
    return rule


def _merged(known: list[str], order: list[str]) -> list[str]:
    """``known`` with the keys of ``order`` it lacks put in where ``order`` has them."""
    out = list(known)
    for k, key in enumerate(order):
        if key not in out:
            before = next((out.index(p) + 1 for p in reversed(order[:k]) if p in out), 0)
            out.insert(before, key)
    return out


def merged(values: list[str]) -> str:
    """The rules several rows read, as one list: a struct's fields in one order and all its
    defaults (a row shows only the keys its tools hold), each other rule once, in the order first
    read. A rule for a key and an edit read at two places keeps the first place read."""
    structs: dict[str, dict] = {}
    others: dict[str, dict] = {}
    for value in values:
        for rule in json.loads(value):
            if "fields" in rule:
                known = structs.setdefault(rule["where"], {"where": rule["where"], "fields": []})
                known["fields"] = _merged(known["fields"], rule["fields"])
                for key, default in rule.get("defaults", {}).items():
                    known.setdefault("defaults", {}).setdefault(key, default)
            else:
                others.setdefault(json.dumps({k: v for k, v in rule.items() if k != "where"}, sort_keys=True), rule)
    return json.dumps([*structs.values(), *others.values()], ensure_ascii=False)
