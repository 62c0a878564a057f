"""tokenizers' ``added_tokens``: texts cut out whole before the model sees the rest.

``special`` tokens are cut out only when the caller parses specials; ``normalized`` ones are
matched on the normalized text (default: not special), the others on the raw text;
``lstrip``/``rstrip`` take the whitespace beside them along; ``single_word`` ones match only
where no word character touches them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tokparity.components._fields import Fields
from tokparity.errors import BadModelFile
from tokparity.textview import clipped


@dataclass(frozen=True)
class AddedToken:
    id: int
    content: str
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = True
    special: bool = False


def parse(path: Path, entries) -> tuple[AddedToken, ...]:
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise BadModelFile(path, "added_tokens must be a list")
    out = []
    for entry in entries:
        if not (isinstance(entry, dict) and isinstance(entry.get("id"), int) and isinstance(entry.get("content"), str)):
            raise BadModelFile(path, f"malformed added_tokens entry {clipped(entry)}; "
                                     'expected {"id": <int>, "content": <str>, …}')
        if entry["id"] < 0:
            raise BadModelFile(path, f"added_tokens entry {clipped(entry['content'])} has id {entry['id']}, "
                                     "expected a non-negative id")
        f = Fields(path, f"added_tokens entry {clipped(entry['content'])}", entry)
        special = f.bool("special", False)
        out.append(AddedToken(entry["id"], entry["content"], f.bool("single_word", False), f.bool("lstrip", False),
                              f.bool("rstrip", False), f.bool("normalized", not special), special))
    return tuple(out)
