"""tokenizer.json -> GGUF and SentencePiece .model -> GGUF: llama.cpp on the converted file
against the original library on the original file, over the pooled texts (conftest.py).

Numbers seen on 2026-11-22 over 1,574 pooled texts (llama.cpp 0.3.36 via llama-cpp-python,
tokenizers 0.22, sentencepiece 0.2.x):

  llama-bpe tokenizer.json     1574 / 1574   same fingerprint as llama.cpp's own GGUF
  lenml-llama2 tokenizer.json  1574 / 1574
  gemma-3 tokenizer.json       1570 / 1574   (KNOWN_DIFFERENCES below)
  botchan-unigram .model       1570 / 1574   (KNOWN_DIFFERENCES below)
  kyoto-ja-unigram .model      all but the texts listed in KNOWN_DIFFERENCES
  botchan-bpe .model           only texts its 1,000 pieces cover (llama.cpp aborts otherwise,
                               see test_bpe_without_byte_pieces_warns); every difference there
                               is SentencePiece's normalizer, checked text by text
"""

from __future__ import annotations

import pytest
from convert_helpers import LlamaCpp, agreement

from tokparity.convert import convert
from tokparity.vocab import load_vocab
from tokparity.vocab.gguf_reader import GGUFMetadata

# Why the converted GGUF and the original may disagree: name -> reason -> (why, test of a case).
# A disagreement that no listed reason explains fails the test.
INPUT_U2581 = ("the text holds a literal U+2581 (▁). SentencePiece reads it as whitespace (and drops it under "
               "remove_extra_whitespaces); llama.cpp keeps it as the ▁ piece", lambda text, a, b: "\u2581" in text)
VITERBI_TIE = ("two segmentations with the same pieces, so the same score: SentencePiece and llama.cpp break "
               "the Viterbi tie differently ('33 3 33' vs '3 33 33')", lambda text, a, b: sorted(a) == sorted(b))
KNOWN_DIFFERENCES = {
    "gemma-3": {
        # Gemma 3's whitespace runs are added tokens spelled with ▁ ("▁▁" is id 138). llama.cpp's
        # converter (and tokparity's loader, which follows it) rewrites ▁ as a space in
        # user-defined tokens, because llama.cpp matches them before escaping spaces; HF matches
        # them after its normalizer turned spaces into ▁. A text with a literal ▁ next to a
        # space or another ▁ then matches the added token in HF only.
        "user-defined-with-u2581": ("user-defined token spelled with ▁ is stored with spaces (llama.cpp "
                                    "converter rule); a literal ▁ in the text matches it only in HF",
                                    lambda text, a, b: "\u2581" in text),
    },
    "botchan-unigram": {"input-u2581": INPUT_U2581},
    "kyoto-ja-unigram": {"input-u2581": INPUT_U2581, "viterbi-tie": VITERBI_TIE},
}


def _check_known(name: str, result) -> dict[str, int]:
    """Assert every disagreement has a listed reason; return how many each reason explains."""
    known = KNOWN_DIFFERENCES.get(name, {})
    counts = {reason: 0 for reason in known}
    unexplained = {}
    for case_id, (text, a, b) in result.disagree.items():
        reason = next((r for r, (_, test) in known.items() if test(text, a, b)), None)
        if reason is None:
            unexplained[case_id] = (text, a, b)
        else:
            counts[reason] += 1
    print(f"{name}: {result}; explained: {counts}")
    assert not unexplained, f"{name}: {len(unexplained)} unexplained disagreements, first: " + \
        repr(next(iter(unexplained.items())))[:600]
    return counts


# --- tokenizer.json -> GGUF ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def converted_hf(zoo, tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("hf2gguf")
    cache = {}

    def get(name: str):
        if name not in cache:
            src = zoo(name).files["tokenizer_json"]
            cache[name] = (src, convert(src, "gguf", out_dir / f"{name}.gguf"))
        return cache[name]

    return get


def test_llama_bpe_json_gives_llama_cpps_own_gguf(zoo, converted_hf):
    src, result = converted_hf("llama-bpe")
    ours, theirs = load_vocab(result.out_path), load_vocab(zoo("llama-bpe").files["gguf"])
    assert ours.fingerprint == theirs.fingerprint
    a, b = GGUFMetadata(result.out_path).fields, GGUFMetadata(zoo("llama-bpe").files["gguf"]).fields
    for key in ("tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.bos_token_id",
                "tokenizer.ggml.eos_token_id"):
        assert a[key] == b[key], key
    # lenml's tokenizer.json adds no BOS in its post-processor, so llama.cpp's hash says smaug-bpe;
    # the converter says why it wrote llama-bpe instead.
    assert any(w.field == "tokenizer.ggml.pre" and "smaug-bpe" in w.why for w in result.warnings)


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in ("llama-bpe", "lenml-llama2", "gemma-3")])
def test_hf_json_to_gguf_agrees_with_tokenizers(name, converted_hf, texts):
    import tokenizers

    src, result = converted_hf(name)
    hf = tokenizers.Tokenizer.from_file(str(src))
    llama = LlamaCpp(result.out_path)
    # HF always matches added tokens in the text, as llama.cpp does with parse_special.
    got = agreement(texts, lambda s: hf.encode(s, add_special_tokens=False).ids,
                    lambda s: llama.encode(s, add_special=False, parse_special=True))
    _check_known(name, got)
    # With specials on, both add the same BOS/EOS.
    for text in ("Hello world", " leading space", "日本語"):
        assert hf.encode(text).ids == llama.encode(text, add_special=True, parse_special=True), text


def test_spm_style_json_warns_about_merges(converted_hf):
    _, result = converted_hf("lenml-llama2")
    fields = [w.field for w in result.warnings]
    assert "merges" in fields and "decoder" in fields
    meta = GGUFMetadata(result.out_path).fields
    assert meta["tokenizer.ggml.model"] == "llama"
    assert "tokenizer.ggml.scores" in meta and "tokenizer.ggml.merges" not in meta


# --- SentencePiece .model -> GGUF ---------------------------------------------------------------


def sentencepiece_explains(sp, llama: LlamaCpp, text: str, sp_ids: list[int]) -> bool:
    """True when llama.cpp, given SentencePiece's own normalization of ``text``, gives
    SentencePiece's ids: the difference is SentencePiece's normalizer (charsmap, whitespace
    collapsing), which llama.cpp's SPM tokenizer does not have."""
    normalized = sp.normalize(text).replace("\u2581", " ")
    if normalized.startswith(" "):
        normalized = normalized[1:]  # llama.cpp adds the dummy prefix itself
    return llama.encode(normalized, add_special=True) == sp_ids


def covered(sp, texts: dict[str, str]) -> dict[str, str]:
    """The texts whose every character is a piece: the only ones llama.cpp can tokenize with an
    SPM vocabulary that has no <0xNN> byte pieces (it aborts the process on the others)."""
    pieces = {sp.id_to_piece(i) for i in range(sp.get_piece_size())}
    return {k: v for k, v in texts.items() if all(c in pieces for c in v.replace(" ", "\u2581"))}


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in ("botchan-unigram", "kyoto-ja-unigram", "botchan-bpe")])
def test_spm_model_to_gguf_agrees_with_sentencepiece(name, zoo, texts, tmp_path):
    import sentencepiece as spm

    src = zoo(name).files["spm_model"]
    result = convert(src, "gguf", tmp_path / f"{name}.gguf")
    sp = spm.SentencePieceProcessor(model_file=str(src))
    llama = LlamaCpp(result.out_path)
    vocab = load_vocab(src)
    has_bytes = any(t == 6 for t in vocab.token_types)
    cases = texts if vocab.algorithm == "ugm" or has_bytes else covered(sp, texts)
    got = agreement(cases, sp.encode, lambda s: llama.encode(s, add_special=True))
    if vocab.algorithm == "spm":
        unexplained = {k: v for k, v in got.disagree.items() if not sentencepiece_explains(sp, llama, v[0], v[1])}
        print(f"{name}: {got} ({len(cases)} of {len(texts)} texts covered), "
              f"{len(got.disagree) - len(unexplained)} explained by SentencePiece's normalizer")
        assert not unexplained, next(iter(unexplained.items()))
        assert len(cases) > 500
    else:
        _check_known(name, got)
    assert load_vocab(result.out_path).fingerprint == vocab.fingerprint


def test_bpe_without_byte_pieces_warns(zoo, tmp_path):
    result = convert(zoo("botchan-bpe").files["spm_model"], "gguf", tmp_path / "b.gguf")
    by_field = {w.field: w.why for w in result.warnings}
    assert "byte_fallback" in by_field and "aborts" in by_field["byte_fallback"]
    assert "precompiled_charsmap" in by_field and "remove_extra_whitespaces" in by_field
    assert "add_bos_token" in by_field
    meta = GGUFMetadata(result.out_path).fields
    assert meta["tokenizer.ggml.model"] == "llama" and meta["tokenizer.ggml.add_bos_token"] is False


def test_unigram_model_writes_t5_keys(zoo, tmp_path):
    result = convert(zoo("kyoto-ja-unigram").files["spm_model"], "gguf", tmp_path / "k.gguf")
    meta = GGUFMetadata(result.out_path).fields
    assert meta["tokenizer.ggml.model"] == "t5"
    assert meta["tokenizer.ggml.pre"] == "default"
    assert "tokenizer.ggml.precompiled_charsmap" in meta
    assert meta["tokenizer.ggml.remove_extra_whitespaces"] is True
    assert meta["tokenizer.ggml.add_space_prefix"] is True
