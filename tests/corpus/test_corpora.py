"""The committed corpora: they load, their tags are right, nothing is empty or duplicated."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import regex

from tokparity.corpus import COMMITTED, BadCorpus, corpora_dir, load_corpus, read_jsonl, read_lines

# Which Unicode scripts (regex's \p{Script=...} names) a record's ISO 15924 tag allows.
SCRIPT_ALLOWS = {"Jpan": {"Hiragana", "Katakana", "Han"}, "Hans": {"Han"}, "Hant": {"Han"}, "Kore": {"Hangul", "Han"}}
ISO_TO_UNICODE = {
    "Latn": "Latin", "Cyrl": "Cyrillic", "Grek": "Greek", "Armn": "Armenian", "Geor": "Georgian", "Arab": "Arabic",
    "Hebr": "Hebrew", "Deva": "Devanagari", "Beng": "Bengali", "Taml": "Tamil", "Telu": "Telugu", "Knda": "Kannada",
    "Mlym": "Malayalam", "Gujr": "Gujarati", "Guru": "Gurmukhi", "Sinh": "Sinhala", "Thai": "Thai", "Laoo": "Lao",
    "Khmr": "Khmer", "Mymr": "Myanmar", "Tibt": "Tibetan", "Ethi": "Ethiopic", "Hang": "Hangul", "Mong": "Mongolian",
    "Cher": "Cherokee", "Cans": "Canadian_Aboriginal", "Tfng": "Tifinagh", "Syrc": "Syriac", "Thaa": "Thaana",
    "Nkoo": "Nko", "Orya": "Oriya",
}


def committed():
    return [c for c in COMMITTED if (corpora_dir() / f"{c}.jsonl").is_file()]


def letter_scripts(text: str) -> set[str]:
    """The scripts of the letters and marks in ``text`` (Common and Inherited left out)."""
    scripts = set()
    for ch in text:
        if not regex.match(r"[\p{L}\p{M}]", ch):
            continue
        for name in set(ISO_TO_UNICODE.values()) | {"Hiragana", "Katakana", "Han"}:
            if regex.match(rf"\p{{Script={name}}}", ch):
                scripts.add(name)
                break
        else:
            if not regex.match(r"[\p{Script=Common}\p{Script=Inherited}]", ch):
                scripts.add(f"other:{ord(ch):04X}")
    return scripts


@pytest.mark.parametrize("name", COMMITTED)
def test_corpus_loads_without_empty_or_duplicate_records(name):
    if name not in committed():
        pytest.fail(f"corpora/{name}.jsonl is missing")
    cases = list(load_corpus(name))
    assert len(cases) >= 100
    assert all(c.text for c in cases), "empty text"
    assert len({c.id for c in cases}) == len(cases), "duplicate id"
    dup = [t for t, n in Counter(c.text for c in cases).items() if n > 1]
    assert dup == [], f"duplicate texts: {dup[:3]}"
    assert all({"script", "lang", "kind"} <= set(c.tags) for c in cases)


def test_multilingual_covers_40_languages_and_25_scripts():
    cases = list(load_corpus("multilingual"))
    prose = [c for c in cases if c.tags["kind"] == "prose"]
    assert len({c.tags["lang"] for c in prose}) >= 40
    assert len({c.tags["script"] for c in prose}) >= 25
    assert sum(c.tags["kind"] == "mixed" for c in cases) >= 15
    assert sum(c.tags["kind"] == "code" for c in cases) >= 10
    wrong = []
    for c in prose:
        tag = c.tags["script"]
        allowed = SCRIPT_ALLOWS.get(tag, {ISO_TO_UNICODE.get(tag, tag)})
        extra = letter_scripts(c.text) - allowed
        if extra:
            wrong.append((c.id, tag, sorted(extra)))
    assert wrong == [], wrong[:5]


def test_emoji_corpus_holds_every_kind_of_sequence():
    kinds = Counter(c.tags["kind"] for c in load_corpus("emoji"))
    for kind in ("single", "zwj", "zwj-skin-tone", "skin-tone", "flag", "subdivision-flag", "keycap",
                 "variation-selector", "run", "glued"):
        assert kinds[kind] > 0, kind
    texts = {c.text for c in load_corpus("emoji")}
    assert "👨\u200d👩\u200d👧\u200d👦" in texts  # a ZWJ family
    assert "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f" in texts  # Scotland's subdivision flag


def test_llama_cpp_tests_corpus_pools_the_inp_files(zoo):
    cases = list(load_corpus("llama.cpp-tests"))
    texts = [c.text for c in cases]
    assert len(texts) == len(set(texts)) and "ied 4 ½ months" in texts and "" in texts
    assert len(cases) >= 46


def test_bad_corpus_lines_name_file_and_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "\xff"}\n')
    with pytest.raises(BadCorpus, match=r"bad.jsonl:2: invalid UTF-8 at byte 21 of the line"):
        list(read_jsonl(p))
    p.write_text('{"id": "a", "text": "ok"}\n{"id": "b"}\n')
    with pytest.raises(BadCorpus, match=r"bad.jsonl:2: a record must be an object with a string 'text'"):
        list(read_jsonl(p))
    p.write_text('{"id": "a", "text": "ok"\n')
    with pytest.raises(BadCorpus, match=r"bad.jsonl:1: invalid JSON"):
        list(read_jsonl(p))
    t = tmp_path / "lines.txt"
    t.write_bytes(b"one\r\ntwo\n\nthree")
    assert [c.text for c in read_lines(t)] == ["one", "two", "three"]
    with pytest.raises(BadCorpus, match="unknown corpus 'nope'"):
        list(load_corpus("nope"))


def test_jsonl_round_trips_any_text(tmp_path):
    nasty = "\x00\x01\u2028\u2029\ufeff  \t\r\n🏴\U000e0067 <script>alert(1)</script> =HYPERLINK(\"x\")"
    p = tmp_path / "n.jsonl"
    p.write_text(json.dumps({"id": "n", "text": nasty}) + "\n", encoding="utf-8")
    assert next(read_jsonl(p)).text == nasty
