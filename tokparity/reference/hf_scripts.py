"""tokenizers' ``UnicodeScripts`` pre-tokenizer: cut where the Unicode script changes.

tokenizers carries its own table of the 137 scripts of Unicode 9 (``get_script``, mirrored in
``hf_unicode``); a character outside it is ``Any``, as is the space. Hiragana, Katakana and
U+30FC count as Han. A cut falls before a character whose script differs from the last script
seen, ``Any`` never cutting and never counting as seen.
"""

from __future__ import annotations

import functools

from tokparity.reference.hf_unicode import get_script


@functools.lru_cache(maxsize=65536)
def script(ch: str) -> str:
    """tokenizers' ``fixed_script``."""
    if ch == "\u30fc":
        return "Han"
    if ch == " ":
        return "Any"
    name = get_script(ch)
    return "Han" if name in ("Hiragana", "Katakana") else name


def split_scripts(text: str) -> list[tuple[int, str]]:
    """(start, piece) for each run of one script: ``"abcабв"`` -> ``[(0, "abc"), (3, "абв")]``."""
    cuts = []
    last = None
    for i, ch in enumerate(text):
        s = script(ch)
        if s != "Any" and last != "Any" and last != s:
            cuts.append(i)
        if s != "Any":
            last = s
    cuts.append(len(text))
    return [(a, text[a:b]) for a, b in zip(cuts, cuts[1:]) if b > a]
