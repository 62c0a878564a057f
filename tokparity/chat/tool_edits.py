"""Rules that edit the tools' JSON schemas before rendering (``ChatWay.tools_edited``).

An engine may change each tool before the template writes it. OpenAI's strict mode sets
``additionalProperties`` to false in every object schema, and makes every property required.
An adapter for another API takes out the keys that API refuses (``additionalProperties``,
``$schema``, ``default``). A rule says which key, in which objects, and what becomes of it:

    {"key": "additionalProperties", "where": "object", "value": false}
    {"key": "required", "where": "properties", "value_of": "properties"}
    {"key": "default", "where": "any", "drop": true}

``where`` picks the objects of each tool (``WHERE``). A rule applies to each object it picks,
nested ones too, in the order the rules are listed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

# The objects a rule applies to, as tests on the object before any rule edits it.
WHERE: dict[str, Callable[[dict], bool]] = {
    "object": lambda d: d.get("type") == "object",  # a schema of an object
    "properties": lambda d: isinstance(d.get("properties"), dict),  # a schema that lists properties
    "function": lambda d: isinstance(d.get("name"), str) and "parameters" in d,  # a tool's function
    "any": lambda d: True,  # every object
}
WHERE_SAID = {"object": "every object schema", "properties": "every schema with properties",
              "function": "every tool's function", "any": "every object of the tools"}


def value_of(rule: dict, node: dict) -> Any:
    """The value a ``set`` rule gives ``node``: its constant, or the names of the node's properties."""
    return list(node["properties"]) if rule.get("value_of") == "properties" else rule.get("value")


def changes(rule: dict, node: dict) -> bool:
    """Whether ``rule`` changes ``node`` (it picks it, and the key is not already so)."""
    if not WHERE[rule["where"]](node):
        return False
    if rule.get("drop"):
        return rule["key"] in node
    return rule["key"] not in node or node[rule["key"]] != value_of(rule, node)


def edited(tools: list, rules: str) -> list:
    """The tools with each rule of the JSON list ``rules`` applied to every object they hold."""
    parsed = json.loads(rules)

    def walk(value: Any) -> Any:
        if isinstance(value, list):
            return [walk(v) for v in value]
        if not isinstance(value, dict):
            return value
        node = {k: walk(v) for k, v in value.items()}
        for rule in parsed:
            if WHERE[rule["where"]](value):  # (tested on the object as given, before any rule)
                if rule.get("drop"):
                    node.pop(rule["key"], None)
                else:
                    node[rule["key"]] = value_of(rule, value)
        return node

    return [walk(t) for t in tools]


def said(rules: str) -> str:
    """The rules in words: "sets additionalProperties to false in every object schema"."""
    words = []
    for rule in json.loads(rules):
        where = WHERE_SAID[rule["where"]]
        if rule.get("drop"):
            words.append(f"takes {rule['key']} out of {where}")
        elif rule.get("value_of") == "properties":
            words.append(f"sets {rule['key']} to the names of its properties in {where}")
        else:
            words.append(f"sets {rule['key']} to {json.dumps(rule['value'], ensure_ascii=False)} in {where}")
    return "; ".join(words)
