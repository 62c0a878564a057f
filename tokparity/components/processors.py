"""tokenizers' post-processors: what ``add_special_tokens`` puts around one sequence.

Only the single-sequence side matters to tokparity (it encodes one text at a time); the pair
template is kept for converters. ``ByteLevel`` changes offsets only, never ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from tokparity.components._fields import Fields, component_type
from tokparity.textview import clipped


@dataclass(frozen=True)
class TemplateProcessing:
    """``single``: the template's items in order, each ``("$", "A")`` for the sequence or
    ``("special", name)``; ``special_tokens``: name -> the ids it stands for."""
    kind: ClassVar[str] = "TemplateProcessing"
    single: tuple[tuple[str, str], ...] = ()
    pair: tuple[tuple[str, str], ...] = ()
    special_tokens: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def around(self) -> tuple[list[int], list[int]]:
        """The ids before and after the sequence in ``single``."""
        ids = dict(self.special_tokens)
        before: list[int] = []
        after: list[int] = []
        seen = False
        for what, name in self.single:
            if what == "$":
                seen = True
            else:
                (after if seen else before).extend(ids.get(name, ()))
        return before, after


@dataclass(frozen=True)
class BertProcessing:
    kind: ClassVar[str] = "BertProcessing"
    sep: tuple[str, int] = ("[SEP]", 102)
    cls: tuple[str, int] = ("[CLS]", 101)

    def around(self) -> tuple[list[int], list[int]]:
        return [self.cls[1]], [self.sep[1]]


@dataclass(frozen=True)
class RobertaProcessing(BertProcessing):
    kind: ClassVar[str] = "RobertaProcessing"
    sep: tuple[str, int] = ("</s>", 2)
    cls: tuple[str, int] = ("<s>", 0)
    trim_offsets: bool = True
    add_prefix_space: bool = True


@dataclass(frozen=True)
class ByteLevel:
    kind: ClassVar[str] = "ByteLevel"
    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True

    def around(self) -> tuple[list[int], list[int]]:
        return [], []


@dataclass(frozen=True)
class Sequence:
    kind: ClassVar[str] = "Sequence"
    processors: tuple[PostProcessor, ...] = ()

    def around(self) -> tuple[list[int], list[int]]:
        """Each processor in turn wraps what the ones before it produced."""
        before: list[int] = []
        after: list[int] = []
        for p in self.processors:
            b, a = p.around()
            before, after = b + before, after + a
        return before, after


PostProcessor = TemplateProcessing | BertProcessing | RobertaProcessing | ByteLevel | Sequence
KNOWN = {c.kind: c for c in (TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence)}


def _token_id(f: Fields, name: str, default: tuple[str, int]) -> tuple[str, int]:
    value = f.obj.get(name)
    if value is None:
        return default
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], int) and not isinstance(value[1], bool) and value[1] >= 0):
        raise f.bad(f"{name} is {clipped(value)}, expected [token, id]")
    return value[0], value[1]


def _template(f: Fields, name: str) -> tuple[tuple[str, str], ...]:
    items = []
    for i, item in enumerate(f.list(name, [])):
        inner = item.get("SpecialToken") or item.get("Sequence") if isinstance(item, dict) and len(item) == 1 else None
        if not (isinstance(inner, dict) and isinstance(inner.get("id"), str)):
            raise f.bad(f"{name}[{i}] is {clipped(item)}, expected {{\"SpecialToken\": {{\"id\": ...}}}} or "
                        '{"Sequence": {"id": "A"}}')
        items.append(("special" if "SpecialToken" in item else "$", inner["id"]))
    return tuple(items)


def _special_tokens(f: Fields) -> tuple[tuple[str, tuple[int, ...]], ...]:
    specials = f.obj.get("special_tokens") or {}
    if not isinstance(specials, dict):
        raise f.bad(f"special_tokens is {clipped(specials)}, expected an object")
    out = []
    for name, entry in specials.items():
        ids = entry.get("ids") if isinstance(entry, dict) else None
        if not (isinstance(ids, list) and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids)):
            raise f.bad(f"special_tokens[{clipped(name)}] is {clipped(entry)}, expected {{\"ids\": [<id>, …], …}}")
        out.append((name, tuple(ids)))
    return tuple(out)


def parse(path: Path, where: str, obj) -> PostProcessor:
    cls = component_type(path, where, obj, KNOWN)
    f = Fields(path, f"{where} ({cls.kind})", obj)
    if cls is TemplateProcessing:
        template = TemplateProcessing(_template(f, "single"), _template(f, "pair"), _special_tokens(f))
        names = dict(template.special_tokens)
        for what, name in template.single:
            if what == "special" and name not in names:
                raise f.bad(f"single names special token {clipped(name)}, which special_tokens does not hold")
        return template
    if cls is BertProcessing:
        return BertProcessing(_token_id(f, "sep", ("[SEP]", 102)), _token_id(f, "cls", ("[CLS]", 101)))
    if cls is RobertaProcessing:
        return RobertaProcessing(_token_id(f, "sep", ("</s>", 2)), _token_id(f, "cls", ("<s>", 0)),
                                 f.bool("trim_offsets", True), f.bool("add_prefix_space", True))
    if cls is ByteLevel:
        return ByteLevel(f.bool("add_prefix_space", True), f.bool("trim_offsets", True), f.bool("use_regex", True))
    items = f.list("processors")
    return Sequence(tuple(parse(path, f"{where}.processors[{i}]", item) for i, item in enumerate(items)))


def flatten(post: PostProcessor | None) -> list[PostProcessor]:
    if post is None:
        return []
    if isinstance(post, Sequence):
        return [p for inner in post.processors for p in flatten(inner)]
    return [post]
