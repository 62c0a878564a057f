"""ref == tokenizers on the characters whose answers depend on a Unicode table's version.

tokenizers' crates carry their own tables (hf_unicode.py names them): StripAccents and NFD know
Unicode 9.0, BertNormalizer's and Punctuation's categories Unicode 8.0, UnicodeScripts its own
script table, Oniguruma (Split, ByteLevel) Unicode 16.0, the Rust regex crate (Whitespace)
Unicode 16.0, Rust's ``char::is_numeric`` (Digits) Unicode 17.0. Each case names the code point,
what tokenizers does with it, and checks that answer against the real library too, so a change
in either side shows up here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tokenizers

from tokparity.components import normalizers as n
from tokparity.components import pre_tokenizers as pt
from tokparity.reference.hf_normalizers import Normalizer
from tokparity.reference.hf_pretokenizers import PreTokenizer

LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
BERT = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": True,
        "lowercase": True}

# (why, normalizer, text, what tokenizers 0.23.3 makes of it)
NORMALIZER_CASES = [
    ("U+11A01 Zanabazar Square mark (Unicode 10): not a mark to StripAccents (9.0)",
     {"type": "StripAccents"}, " \U00011a01a", " \U00011a01a"),
    ("U+0301 (Unicode 1.1) is a mark to StripAccents", {"type": "StripAccents"}, "e\u0301", "e"),
    ("U+1E944 Adlam nukta (Unicode 9): not Mn to BertNormalizer (unicode_categories, 8.0)",
     BERT, " \U0001e944a", " \U0001e944a"),
    ("U+16FE4 Khitan filler (Unicode 13): not Mn to BertNormalizer", BERT, "\U00016fe4", "\U00016fe4"),
    ("U+13430 Egyptian format control (Unicode 12): not Cf to BertNormalizer's clean_text",
     BERT, "a\U00013430b", "a\U00013430b"),
    ("U+200B (Cf, Unicode 1.1) is dropped by clean_text", BERT, "a\u200bb", "ab"),
    ("U+11938 Dives Akuru (Unicode 13) has no decomposition in NFD's Unicode 9.0",
     {"type": "NFD"}, "\U00011938", "\U00011938"),
    ("U+11935 U+11930 do not compose in NFC's Unicode 9.0",
     {"type": "NFC"}, "\U00011935\U00011930", "\U00011935\U00011930"),
    ("U+00E9 decomposes in NFD", {"type": "NFD"}, "\u00e9", "e\u0301"),
]

# (why, pre-tokenizer, text, tokenizers' pieces)
PRE_TOKENIZER_CASES = [
    ("U+1FA96 (Unicode 13) is not in tokenizers' script table: Any, so no piece at all",
     {"type": "UnicodeScripts"}, "\U0001fa96", []),
    ("an Any character never cuts", {"type": "UnicodeScripts"}, "a\U0001fa96b", ["a\U0001fa96b"]),
    ("U+32800 (CJK Ext. J, Unicode 17) is not \\p{L} to Oniguruma (16.0)",
     {"type": "Split", "pattern": {"Regex": LLAMA3_SPLIT}, "behavior": "Isolated", "invert": False},
     " \U00032800a", [" \U00032800", "a"]),
    ("nor to ByteLevel's regex", {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                  "use_regex": True},
     "a\U00032800", ["a", "ð²łĢ"]),
    ("nor \\w to the Rust regex crate (16.0) of Whitespace", {"type": "Whitespace"},
     " \U00032800a", ["\U00032800", "a"]),
    ("U+16D70 Kirat Rai digit (Unicode 16) is numeric to Rust 1.99 (17.0)",
     {"type": "Digits", "individual_digits": True}, "a\U00016d70b", ["a", "\U00016d70", "b"]),
    ("U+2E43 (Pd, Unicode 9) is not punctuation to unicode_categories (8.0)",
     {"type": "Punctuation", "behavior": "Isolated"}, "a\u2e43b", ["a\u2e43b"]),
    ("U+2E3A (Pd, Unicode 6.1) is", {"type": "BertPreTokenizer"}, "a\u2e3ab", ["a", "\u2e3a", "b"]),
]


def _tokenizer(normalizer=None, pre_tokenizer=None) -> tokenizers.Tokenizer:
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": normalizer,
            "pre_tokenizer": pre_tokenizer, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}}
    return tokenizers.Tokenizer.from_str(json.dumps(spec))


@pytest.mark.parametrize(("why", "config", "text", "expected"), NORMALIZER_CASES, ids=[c[0][:40] for c in NORMALIZER_CASES])
def test_normalizer_uses_tokenizers_tables(why, config, text, expected):
    library = _tokenizer(normalizer=config).normalizer.normalize_str(text)
    assert library == expected, f"tokenizers itself changed: {why}"
    ours = Normalizer(n.parse(Path("tokenizer.json"), "normalizer", config))(text)
    assert ours == expected, why


@pytest.mark.parametrize(("why", "config", "text", "expected"), PRE_TOKENIZER_CASES,
                         ids=[c[0][:40] for c in PRE_TOKENIZER_CASES])
def test_pre_tokenizer_uses_tokenizers_tables(why, config, text, expected):
    library = [piece for piece, _ in _tokenizer(pre_tokenizer=config).pre_tokenizer.pre_tokenize_str(text)]
    assert library == expected, f"tokenizers itself changed: {why}"
    ours = PreTokenizer(pt.parse(Path("tokenizer.json"), "pre_tokenizer", config))(text)
    assert ours == expected, why


def test_generated_tables_name_their_sources():
    """Each table says which crate and Unicode version it mirrors."""
    from tokparity.reference import _hf_unicode_data as data
    doc = data.__doc__ or ""
    for source in ("unicode_categories 0.1.1", "unicode-normalization-alignments 0.1.12", "Unicode 9.0.0",
                   "Oniguruma 6.9.10", "regex-syntax 0.8.11", "get_script"):
        assert source in doc
