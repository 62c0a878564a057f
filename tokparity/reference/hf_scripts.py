"""tokenizers' ``UnicodeScripts`` pre-tokenizer: cut where the Unicode script changes.

tokenizers carries its own table of the 137 scripts of Unicode 9 (``get_script``); a character
outside it is ``Any``, as is the space. Hiragana, Katakana and U+30FC count as Han. A cut falls
before a character whose script differs from the last script seen, ``Any`` never cutting and
never counting as seen. Python's ``regex`` module answers the script (its Unicode is newer: a
character added to an old script since Unicode 9 is that script here and ``Any`` in tokenizers).
"""

from __future__ import annotations

import functools

import regex

SCRIPTS = (
    "Adlam Ahom AnatolianHieroglyphs Arabic Armenian Avestan Balinese Bamum BassaVah Batak Bengali Bhaiksuki "
    "Bopomofo Brahmi Braille Buginese Buhid CanadianAboriginal Carian CaucasianAlbanian Chakma Cham Cherokee Common "
    "Coptic Cuneiform Cypriot Cyrillic Deseret Devanagari Duployan EgyptianHieroglyphs Elbasan Ethiopic Georgian "
    "Glagolitic Gothic Grantha Greek Gujarati Gurmukhi Han Hangul Hanunoo Hatran Hebrew Hiragana ImperialAramaic "
    "Inherited InscriptionalPahlavi InscriptionalParthian Javanese Kaithi Kannada Katakana KayahLi Kharoshthi Khmer "
    "Khojki Khudawadi Lao Latin Lepcha Limbu LinearA LinearB Lisu Lycian Lydian Mahajani Malayalam Mandaic "
    "Manichaean Marchen MeeteiMayek MendeKikakui MeroiticCursive MeroiticHieroglyphs Miao Modi Mongolian Mro "
    "Multani Myanmar Nabataean NewTaiLue Newa Nko Ogham OlChiki OldHungarian OldItalic OldNorthArabian OldPermic "
    "OldPersian OldSouthArabian OldTurkic Oriya Osage Osmanya PahawhHmong Palmyrene PauCinHau PhagsPa Phoenician "
    "PsalterPahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting Sinhala SoraSompeng "
    "Sundanese SylotiNagri Syriac Tagalog Tagbanwa TaiLe TaiTham TaiViet Takri Tamil Tangut Telugu Thaana Thai "
    "Tibetan Tifinagh Tirhuta Ugaritic Vai WarangCiti Yi").split()
_PATTERNS = [(name, regex.compile(r"\p{sc=" + name + "}")) for name in SCRIPTS]


@functools.lru_cache(maxsize=65536)
def script(ch: str) -> str:
    """tokenizers' ``fixed_script``."""
    if ch == "\u30fc":
        return "Han"
    if ch == " ":
        return "Any"
    for name, rx in _PATTERNS:
        if rx.match(ch):
            return "Han" if name in ("Hiragana", "Katakana") else name
    return "Any"


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
