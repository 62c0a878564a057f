"""SentencePiece .model -> tokenizer.json through transformers' converter: ``tokenizers`` on
the converted file against SentencePiece on the .model, over the pooled texts.

The converter is transformers' own and so are its differences from SentencePiece; each
disagreement must match one reason below (REASONS), and the counts are printed. Seen on
2026-11-22 over 1,574 texts: botchan-unigram 1509, botchan-bpe 1557, kyoto-ja-unigram 1497 agree.
"""

from __future__ import annotations

import json
import unicodedata

import pytest
from convert_helpers import agreement

from tokparity.convert import convert

WHITESPACE = set("\t\n\r\x0b\x0c\x85\u2028\u2029\u00a0\u3000\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                 "\u2007\u2008\u2009\u200a\u202f\u205f\u200b\ufeff\u180e")

# reason -> (why, test on (text, sentencepiece ids, tokenizers ids, control piece texts))
REASONS = {
    "whitespace": ("transformers' normalizer (Strip right + Replace ' {2,}' + Metaspace) is not SentencePiece's "
                   "remove_extra_whitespaces: it strips every trailing whitespace character (\\n, \\t) where "
                   "SentencePiece strips spaces only, and keeps leading spaces",
                   lambda text, a, b, controls: bool(WHITESPACE & set(text)) or text != text.strip(" ")
                   or "  " in text),
    "control-pieces": ("transformers adds control pieces (<s>, </s>) as added tokens and <unk> as the model's unk token, which tokenizers matches "
                       "in the text; SentencePiece never matches control pieces in text",
                       lambda text, a, b, controls: any(c in text for c in controls)),
    "charsmap-sequences": ("tokenizers' Precompiled normalizer and SentencePiece's differ where the charsmap "
                           "rewrites a sequence rather than one character (combining marks, half-width kana "
                           "with a voiced mark: 'ｶﾞ' -> 'ガ')",
                           lambda text, a, b, controls: unicodedata.normalize("NFKC", text)
                           != "".join(unicodedata.normalize("NFKC", c) for c in text)),
    "input-u2581": ("a literal U+2581 in the text: SentencePiece reads it as whitespace, Metaspace keeps it",
                    lambda text, a, b, controls: "\u2581" in text),
    "viterbi-tie": ("same pieces in another order, so the same score: the Viterbi tie is broken differently",
                    lambda text, a, b, controls: sorted(a) == sorted(b)),
}
EXPECTED_MIN_AGREEMENT = {"botchan-unigram": 1500, "botchan-bpe": 1550, "kyoto-ja-unigram": 1490}


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in EXPECTED_MIN_AGREEMENT])
def test_spm_model_to_hf_json_agrees_with_sentencepiece(name, zoo, texts, tmp_path):
    import sentencepiece as spm
    import tokenizers

    src = zoo(name).files["spm_model"]
    result = convert(src, "hf", tmp_path / "tokenizer.json")
    json.loads(result.out_path.read_text("utf-8"))  # a real JSON file
    sp = spm.SentencePieceProcessor(model_file=str(src))
    hf = tokenizers.Tokenizer.from_file(str(result.out_path))
    controls = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if sp.is_control(i) or sp.is_unknown(i)]
    got = agreement(texts, sp.encode, lambda s: hf.encode(s, add_special_tokens=False).ids)
    counts = {r: 0 for r in REASONS}
    unexplained = {}
    for case_id, (text, a, b) in got.disagree.items():
        reason = next((r for r, (_, test) in REASONS.items() if test(text, a, b, controls)), None)
        if reason:
            counts[reason] += 1
        else:
            unexplained[case_id] = (text, [sp.id_to_piece(i) for i in a], [hf.id_to_token(i) for i in b])
    print(f"{name}: {got}; explained: {counts}")
    assert not unexplained, repr(next(iter(unexplained.items())))[:600]
    assert got.agree >= EXPECTED_MIN_AGREEMENT[name]
    assert "remove_extra_whitespaces" in [w.field for w in result.warnings]


def test_a_byte_fallback_model_converts_with_a_decoder_that_reads_its_bytes(zoo, tmp_path):
    """transformers' SpmConverter writes a decoder with no byte fallback (a byte piece decodes as
    the text '<0x23>'); the converted file's decoder reads the bytes, so tokenizers decodes what
    SentencePiece decodes. Found by ``compare --ops decode`` on the zoo's spm-*-byte-fallback models."""
    import sentencepiece as spm
    import tokenizers

    src = zoo("spm-bpe-byte-fallback").files["spm_model"]
    result = convert(src, "hf", tmp_path / "tokenizer.json")
    sp = spm.SentencePieceProcessor(model_file=str(src))
    hf = tokenizers.Tokenizer.from_file(str(result.out_path))
    for text in ("# 1", "naïve 私の名前 🤗 done", "x = {'a': 1}"):
        ids = sp.encode(text)
        assert any(sp.id_to_piece(i).startswith("<0x") for i in ids), text  # byte pieces in play
        assert hf.decode(ids, skip_special_tokens=False) == sp.decode(ids) == text


def test_a_missing_protobuf_is_named(zoo, tmp_path):
    """transformers imports protobuf only once its converter reads the .model: without it, a
    conversion died with transformers' ImportError (seen in a fresh venv with tokparity[hf] alone)."""
    import subprocess
    import sys

    model = zoo("botchan-unigram").path("spm_model")
    code = ("import sys; sys.modules['google.protobuf'] = None\n"  # (what Python does for a module not installed)
            "from tokparity.convert import convert\nfrom tokparity.errors import MissingDependency\n"
            f"try:\n    convert({str(model)!r}, 'hf', {str(tmp_path / 'tokenizer.json')!r})\n"
            "except MissingDependency as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "needs the 'protobuf' package, which is not installed (pip install 'tokparity[spm]')" in out.stdout, out
