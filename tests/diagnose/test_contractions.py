"""``tokparity.diagnose.contractions``: a split regex's contraction group, found in each way the
zoo's regexes spell it and written back edited, splits a text exactly as the same regex with the
edited list spelt out form by form does (what a port that writes the list by hand runs)."""

from __future__ import annotations

import pytest
import regex

from tokparity.diagnose.contractions import (
    ALL_CASES,
    Contractions,
    beyond_lower_case,
    case_insensitive,
    edit,
    form_keys,
)

REST = r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+(?!\S)|\s+"
# The group as cl100k / Llama 3 / Qwen write it, as llama.cpp spells it, and GPT-2's bare list;
# o200k's twice, as a suffix after each kind of word.
SOURCES = {
    "case-insensitive": "(?i:'s|'t|'re|'ve|'m|'ll|'d)" + REST,
    "llama.cpp": "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])" + REST,
    "gpt-2": r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    "o200k": (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
              r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
              r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
}
LOWER = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"]
TEXTS = [f"{before}{form}{after}" for before in ("x", "THEY", " a", "")
         for form in [*ALL_CASES, "'eR", "'Ev", "'q"] for after in ("", "x", "s done", "Z", " ok")]


def spelt_out(source: str, forms: list[str]) -> str:
    """``source`` with its group(s) replaced by ``forms`` one by one (a hand-written list)."""
    listed = "(?:" + "|".join(forms) + ")"
    for spelling in ("(?i:'s|'t|'re|'ve|'m|'ll|'d)", "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])",
                     "'s|'t|'re|'ve|'m|'ll|'d"):
        if spelling in source:
            return source.replace(spelling, listed)
    raise AssertionError(source)


@pytest.mark.parametrize("name", SOURCES)
def test_a_form_left_out_and_a_misspelt_one_added_split_as_the_list_spelt_out(name):
    source = SOURCES[name]
    once = edit(source, lambda group: group.without("'rE" if name != "gpt-2" else "'re"))
    twice = edit(once, lambda group: group.adding("'eR"))
    gone = "'rE" if name != "gpt-2" else "'re"
    forms = [f for f in (ALL_CASES if name != "gpt-2" else LOWER) if f != gone] + ["'eR"]
    by_hand = regex.compile(spelt_out(source, forms))
    edited = regex.compile(twice)
    assert [edited.findall(t) for t in TEXTS] == [by_hand.findall(t) for t in TEXTS]
    assert edited.findall("x'rEx" if name != "gpt-2" else "x're") != regex.compile(source).findall(
        "x'rEx" if name != "gpt-2" else "x're")


@pytest.mark.parametrize("name", ["case-insensitive", "llama.cpp", "o200k"])
def test_lower_case_only(name):
    by_hand = regex.compile(spelt_out(SOURCES[name], LOWER))
    edited = regex.compile(edit(SOURCES[name], Contractions.lower_case))
    assert [edited.findall(t) for t in TEXTS] == [by_hand.findall(t) for t in TEXTS]


def test_what_does_not_apply_is_none():
    assert edit(SOURCES["gpt-2"], Contractions.lower_case) is None  # (lower case already)
    assert edit(SOURCES["llama.cpp"], Contractions.ascii_case) is None  # (ASCII cases already)
    assert edit(SOURCES["gpt-2"], lambda group: group.without("'S")) is None  # (no such form)
    assert edit(SOURCES["case-insensitive"], lambda group: group.adding("'s")) is None  # (a form already)
    assert edit(r"\p{L}+|\s+", Contractions.lower_case) is None
    assert case_insensitive(SOURCES["o200k"]) and not case_insensitive(SOURCES["gpt-2"])


def test_what_a_lower_case_list_misses_is_seen():
    """The lower-case variant is tried on a text where it can change something: a capital form,
    or 'ſ, which the model's case-insensitive group matches and a lower-case list does not."""
    source = SOURCES["case-insensitive"]
    lower = edit(source, Contractions.lower_case)
    for text in ("x'ſx", "it'Sx", "THEY'rEx"):
        assert beyond_lower_case(text) and regex.findall(lower, text) != regex.findall(source, text)
    assert not beyond_lower_case("it's they're we'll") and not beyond_lower_case("l'homme")


def test_ascii_cases_lose_long_s():
    """(?i:'s) matches 'ſ (U+017F folds to s); '[sS] does not: transformers.js's rewrite."""
    source = SOURCES["case-insensitive"]
    assert regex.findall(source, "x'ſx") == ["x", "'ſ", "x"]
    assert regex.findall(edit(source, Contractions.ascii_case), "x'ſx") == ["x", "'ſx"]


def test_form_keys_put_the_telling_forms_first():
    assert form_keys("It's what they've said: you'd think we'll see THEY'rEx soon, he'eRs.") == [
        "+'eR", "-'rE", "-'s", "-'ve", "-'d", "-'ll"]
    assert form_keys("l'homme qu'il, O'Brien") == []  # (no contraction form, no misspelt one)
    assert form_keys("he'eR") == []  # (a misspelt form with no letter after it changes nothing)
