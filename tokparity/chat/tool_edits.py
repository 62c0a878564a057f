"""Rules that edit the tools' JSON before rendering (``ChatWay.tools_edited``).

An engine may change each tool before the template writes it. OpenAI's strict mode sets
``additionalProperties`` to false in every object schema, and makes every property required.
An adapter for another API takes out the keys that API refuses (``$schema``, ``default``). A
server that reads each tool into a typed struct (Go, Rust) writes back only the struct's
fields, in the struct's order, a missing one as its zero value, and a map's keys sorted (Go). A rule says which objects it
edits (``where``), and how:

    {"key": "additionalProperties", "where": "object", "value": false}
    {"key": "required", "where": "properties", "value_of": "properties"}
    {"key": "default", "where": "any", "drop": true}
    {"key": "parameters", "where": "function", "rename": "arguments"}
    {"key": "description", "where": "property", "default": ""}
    {"key": "properties", "where": "parameters", "sorted": true}
    {"where": "property", "fields": ["type", "description"], "defaults": {"description": ""}}

A rule applies to each object it picks, nested ones too, in the order the rules are listed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

# The objects a rule applies to: a test on an object as given (before any rule edits it) and its
# place in the tool: "tool", "function", "parameters", "property" (a value of a "properties"
# object), "items" (the value of an "items" key), or "" (elsewhere).
WHERE: dict[str, Callable[[dict, str], bool]] = {
    "object": lambda d, place: d.get("type") == "object",  # a schema of an object
    "properties": lambda d, place: isinstance(d.get("properties"), dict),  # a schema that lists properties
    "tool": lambda d, place: place == "tool",
    "function": lambda d, place: place == "function",
    "parameters": lambda d, place: place == "parameters",
    "property": lambda d, place: place == "property",
    "items": lambda d, place: place == "items",
    "any": lambda d, place: True,  # every object
}
WHERE_SAID = {"object": "every object schema", "properties": "every schema with properties", "tool": "every tool",
              "function": "every tool's function", "parameters": "every tool's parameters",
              "property": "every property's schema", "items": "every array's items", "any": "every object of the tools"}


def places(value: Any, place: str = "tool") -> Iterator[tuple[dict, str]]:
    """Every object of a tool with its place, the outer ones first."""
    if isinstance(value, list):
        for v in value:
            yield from places(v, "")
    elif isinstance(value, dict):
        yield value, place
        for key, v in value.items():
            if property_map(key, v, place):
                for schema in v.values():
                    yield from places(schema, "property")
            else:
                yield from places(v, place_of(key, place))


def property_map(key: str, value: Any, place: str) -> bool:
    """Whether ``value``, under ``key`` of an object at ``place``, maps property names to schemas."""
    return key == "properties" and isinstance(value, dict) and place != "tool"


def place_of(key: str, parent: str) -> str:
    """The place of the value of ``key`` in an object at ``parent``."""
    if parent == "tool" and key == "function":
        return "function"
    if parent == "function" and key == "parameters":
        return "parameters"
    return "items" if key == "items" else ""


def value_of(rule: dict, node: dict) -> Any:
    """The value a ``set`` rule gives ``node``: its constant, or the names of the node's properties."""
    return list(node["properties"]) if rule.get("value_of") == "properties" else rule.get("value")


def apply(rule: dict, given: dict, node: dict) -> dict:
    """``node`` (``given`` with its inner objects edited) with ``rule`` applied, where it picks it."""
    if "fields" in rule:
        defaults = rule.get("defaults", {})
        return {k: node[k] if k in node else defaults[k] for k in rule["fields"] if k in node or k in defaults}
    key = rule["key"]
    if rule.get("drop"):
        return {k: v for k, v in node.items() if k != key}
    if "rename" in rule:
        return {rule["rename"] if k == key else k: v for k, v in node.items()}
    if "default" in rule:
        return node if key in node else node | {key: rule["default"]}
    if rule.get("sorted"):
        return node | {key: dict(sorted(node[key].items()))} if isinstance(node.get(key), dict) else node
    if rule.get("value_of") == "properties" and not isinstance(given.get("properties"), dict):
        return node  # (no properties to name)
    return node | {key: value_of(rule, given)}


def edited(tools: list, rules: str) -> list:
    """The tools with each rule of the JSON list ``rules`` applied to every object they hold."""
    parsed = json.loads(rules)

    def walk(value: Any, place: str) -> Any:
        if isinstance(value, list):
            return [walk(v, "") for v in value]
        if not isinstance(value, dict):
            return value
        node = {k: {name: walk(v, "property") for name, v in inner.items()} if property_map(k, inner, place)
                else walk(inner, place_of(k, place)) for k, inner in value.items()}
        for rule in parsed:
            if WHERE[rule["where"]](value, place):  # (tested on the object as given, before any rule)
                node = apply(rule, value, node)
        return node

    return [walk(t, "tool") for t in tools]


def said(rules: str) -> str:
    """The rules in words: "sets additionalProperties to false in every object schema"."""
    words = []
    for rule in json.loads(rules):
        where = WHERE_SAID[rule["where"]]
        if "fields" in rule:
            defaults = "".join(f", {k} as {json.dumps(v, ensure_ascii=False)} where missing"
                               for k, v in rule.get("defaults", {}).items())
            words.append(f"writes only {', '.join(rule['fields'])}, in that order, in {where}{defaults}")
        elif rule.get("drop"):
            words.append(f"takes {rule['key']} out of {where}")
        elif "rename" in rule:
            words.append(f"writes {rule['key']} as {rule['rename']} in {where}")
        elif rule.get("sorted"):
            words.append(f"writes the keys of {rule['key']} in sorted order in {where}")
        elif "default" in rule:
            words.append(f"sets {rule['key']} to {json.dumps(rule['default'], ensure_ascii=False)} where missing, in {where}")
        elif rule.get("value_of") == "properties":
            words.append(f"sets {rule['key']} to the names of its properties in {where}")
        else:
            words.append(f"sets {rule['key']} to {json.dumps(rule['value'], ensure_ascii=False)} in {where}")
    return "; ".join(words)
