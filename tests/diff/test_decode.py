"""compare --ops decode: the oracle's ids, decoded by each backend. Real case: Llama 3's
tokenizer_config sets clean_up_tokenization_spaces, which llama.cpp applies when it detokenizes
and tokenizers' raw decoder does not (tokenizers #1543)."""

from __future__ import annotations

import json

from tokparity.diff.decode import classify_decode
from tokparity.reference.decode import hf_clean_up as cleaned
from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services
from tokparity.vocab.special_texts import SpecialTextFinder


def test_cleaned_removes_the_spaces_a_cleaning_decoder_removes():
    assert cleaned("Hello , world . I 'm here !") == "Hello, world. I'm here!"
    assert cleaned("do n't") == "don't" and cleaned("a ' b") == "a'b" and cleaned("don ' t") == "don't"
    assert cleaned("x + y = 2") == "x + y = 2"


def test_classify_decode_cleanup_and_roundtrip():
    v = classify_decode("hello !", "hello!", "hello !")
    assert v.cls == "decode-cleanup" and "the oracle cleans them up" in v.evidence
    v = classify_decode("a  b", "a b", "a  b")
    assert v.cls == "decode-roundtrip" and "only the backend gives the input back" in v.evidence


def test_the_evidence_shows_where_two_long_texts_differ():
    """A newcomer saw two equal strings on llama-server's decode of a C file: the evidence quoted
    each text's first 80 characters, and the first space before punctuation came later."""
    head = "#include <stdio.h>\n#include <string.h>\n\n/* Zwraca długość łańcucha bez końcowych spacji */\n"
    oracle, backend = head + "int f(void), g(void).", head + "int f(void) , g(void) ."
    evidence = classify_decode(oracle, oracle, backend).evidence
    assert "cleans them up" in evidence and "'…" in evidence and "f(void) , g" in evidence, evidence


def test_compare_decode_on_llama_bpe(zoo, tmp_path):
    zoo("llama-bpe")
    corpus = tmp_path / "decode.jsonl"
    texts = {"c1": "hello !", "c2": "Hello , world . I 'm here", "c3": "plain text, nothing to clean"}
    corpus.write_text("".join(json.dumps({"id": k, "text": t, "tags": {}}) + "\n" for k, t in texts.items()), "utf-8")
    results = run_compare(["llama-bpe"], [str(corpus)], ["hf", "ref"], CompareOptions(ops=("encode", "decode")))
    by_case = {(m.backend, m.case_id): m for m in results.mismatches}
    assert set(by_case) == {("hf", "c1"), ("hf", "c2")}  # ref decodes as llama.cpp does
    m = by_case[("hf", "c2")]
    assert (m.cls, m.stage, m.oracle) == ("decode-cleanup", "decode", "llama.cpp")
    assert m.oracle_ids == m.backend_ids
    assert "oracle \"Hello, world. I'm here\" vs backend \"Hello , world . I 'm here\"" in m.evidence
    # without --ops decode the same run agrees: the ids are the same
    plain = run_compare(["llama-bpe"], [str(corpus)], ["hf", "ref"], CompareOptions())
    assert not plain.mismatches


def test_decode_roundtrip_real_cases_on_a_sentencepiece_unigram(zoo, tmp_path):
    """Real cases from `compare --ops decode` on botchan-unigram (2026-11-23): the ids agree, and
    still the texts differ. SentencePiece writes <unk> as ' ⁇ ' where llama.cpp writes '<unk>'
    (botchan's vocabulary has no digits), and SentencePiece's decoder drops every leading '▁'
    where llama.cpp drops the one of the dummy prefix. Each gets decode-roundtrip with the
    evidence that names it, and the shipped list knows both."""
    zoo("botchan-unigram")
    corpus = tmp_path / "decode.jsonl"
    texts = {"digits": "The 7:45 train", "mark": "\u2581hello", "plain": "the whole family"}
    corpus.write_text("".join(json.dumps({"id": k, "text": t, "tags": {}}) + "\n" for k, t in texts.items()), "utf-8")
    raw = run_compare(["botchan-unigram"], [str(corpus)], ["sentencepiece", "llama.cpp"],
                      CompareOptions(ops=("encode", "decode")))
    by_case = {m.case_id: m for m in raw.mismatches}
    assert set(by_case) == {"digits", "mark"}
    digits, mark = by_case["digits"], by_case["mark"]
    assert (digits.cls, digits.stage, digits.oracle, digits.backend) == ("decode-roundtrip", "decode", "sentencepiece",
                                                                          "llama.cpp")
    assert digits.oracle_ids == digits.backend_ids and 0 in digits.oracle_ids  # <unk> is id 0 in botchan's model
    assert "as ' ⁇ ' (SentencePiece's unk_surface) on the oracle's side and as '<unk>'" in digits.evidence
    assert "'The  ⁇ : ⁇ 5 train'" in digits.evidence and "'The <unk>:<unk>5 train'" in digits.evidence
    assert mark.cls == "decode-roundtrip"
    assert "differ only in leading spaces, 0 on the oracle's side and 1 on the backend's" in mark.evidence
    known = run_compare(["botchan-unigram"], [str(corpus)], ["sentencepiece", "llama.cpp"],
                        CompareOptions(ops=("encode", "decode"), services=Services(known=load_known())))
    assert {m.case_id: m.known for m in known.mismatches} == {
        "digits": "sentencepiece-unk-surface", "mark": "sentencepiece-decode-drops-leading-spaces"}


def test_classify_decode_unk_surface_needs_the_rest_to_agree():
    v = classify_decode("a 7 b", "a  ⁇  b", "a <unk> b", unk="<unk>")
    assert v.cls == "decode-roundtrip" and "unk_surface" in v.evidence
    v = classify_decode("a 7 b", "a  ⁇  b!", "a <unk> b", unk="<unk>")  # something else differs too
    assert v.cls == "decode-roundtrip" and "unk_surface" not in v.evidence


def test_a_run_of_bytes_replaced_whole_is_told_from_other_text():
    """tokenizers' ByteFallback writes one U+FFFD per byte of a run with a bad byte, its good bytes
    too (real, spm-bpe-byte-fallback's ids-17: llama.cpp 'enco�n(' vs tokenizers 'enco���'); a
    U+FFFD where the other side has a character that was never broken is another difference."""
    v = classify_decode("", "alk enco\ufffdn( tell", "alk enco\ufffd\ufffd\ufffd tell")
    assert "differ only where the backend has U+FFFD for characters the oracle has" in v.evidence
    assert "replaced whole, its good characters too" in v.evidence
    assert "U+FFFD for characters" not in classify_decode("", "ab x cd", "ab \ufffd cd").evidence
    # each run must stand for as many bytes as it has U+FFFD: a text cut short after a bad byte, text added
    # after one, or only a space apart, is another difference
    for kept, replaced in (("Hi \ufffd world, more text", "Hi \ufffd"), ("Hi \ufffd", "Hi \ufffd and more"),
                           (" \ufffdabc", "\ufffdabc"), ("a\ufffdbc", "a\ufffd\ufffd\ufffd\ufffdc")):
        assert "U+FFFD for characters" not in classify_decode("", kept, replaced).evidence, (kept, replaced)
    # a bad byte then a four-byte character, as llama.cpp and as ByteFallback give them
    assert "where the oracle has U+FFFD" in classify_decode("", " t" + "\ufffd" * 5 + "in", " t\ufffd\U00010348in").evidence
    # one U+FFFD per byte against one per sequence stays that verdict, leading spaces aside too
    assert "how many U+FFFD" in classify_decode("", "t\ufffd", "t\ufffd\ufffd").evidence
    both = classify_decode("", "t\ufffd\ufffd", " t\ufffd").evidence
    assert "differ only in leading spaces, 0 on the oracle's side and 1 on the backend's, and in how many U+FFFD" in both
    # special tokens written on both sides, only spaced otherwise: not "left out on one side"
    assert "differ only in special tokens" not in classify_decode("", "<s>   Hello", "<s>Hello", specials=SpecialTextFinder(["<s>"])).evidence
    assert "differ only in special tokens" in classify_decode("", "a<s>b", "ab", specials=SpecialTextFinder(["<s>"])).evidence
    assert "how many U+FFFD" not in classify_decode("", "hello", " hello").evidence


def test_the_reference_decodes_tokens_outside_the_byte_alphabet_as_tokenizers_does(zoo):
    """DeepSeek V3's special tokens ('<｜begin▁of▁sentence｜>') are not in the byte-level alphabet:
    tokenizers' ByteLevel decoder takes such a token as its own UTF-8, whole, and so does the
    reference (it wrote '<?begin?of?sentence?>' before the zoo run of --ops decode caught it)."""
    from tokparity.backends.registry import make_backend

    model = zoo("deepseek-v3")
    with make_backend("ref", model) as ref, make_backend("hf", model) as hf:
        for ids in ([0, 1], [5, 0, 5], [100, 0, 200, 128000]):
            assert ref.decode(ids) == hf.decode(ids)
        assert ref.decode([5, 0, 5]) == "#<｜begin▁of▁sentence｜>#"
        assert ref.piece_bytes([0]) == hf.piece_bytes([0]) == ["<｜begin▁of▁sentence｜>".encode()]
