"""compare --decode: the ids both sides agree on, decoded by each. Real case: Llama 3's
tokenizer_config sets clean_up_tokenization_spaces, which llama.cpp applies when it detokenizes
and tokenizers' raw decoder does not (tokenizers #1543)."""

from __future__ import annotations

import json

from tokparity.compare import CompareOptions, run_compare
from tokparity.diff.decode import classify_decode, cleaned


def test_cleaned_removes_the_spaces_a_cleaning_decoder_removes():
    assert cleaned("Hello , world . I 'm here !") == "Hello, world. I'm here!"
    assert cleaned("do n't") == "don't" and cleaned("a ' b") == "a' b"
    assert cleaned("x + y = 2") == "x + y = 2"


def test_classify_decode_cleanup_and_roundtrip():
    v = classify_decode("hello !", "hello!", "hello !")
    assert v.cls == "decode-cleanup" and "the oracle cleans them up" in v.evidence
    v = classify_decode("a  b", "a b", "a  b")
    assert v.cls == "decode-roundtrip" and "only the backend gives the input back" in v.evidence


def test_compare_decode_on_llama_bpe(zoo, tmp_path):
    zoo("llama-bpe")
    corpus = tmp_path / "decode.jsonl"
    texts = {"c1": "hello !", "c2": "Hello , world . I 'm here", "c3": "plain text, nothing to clean"}
    corpus.write_text("".join(json.dumps({"id": k, "text": t, "tags": {}}) + "\n" for k, t in texts.items()), "utf-8")
    results = run_compare(["llama-bpe"], [str(corpus)], ["hf", "ref"], CompareOptions(decode=True, known=None))
    by_case = {(m.backend, m.case_id): m for m in results.mismatches}
    assert set(by_case) == {("hf", "c1"), ("hf", "c2")}  # ref decodes as llama.cpp does
    m = by_case[("hf", "c2")]
    assert (m.cls, m.stage, m.oracle) == ("decode-cleanup", "decode", "llama.cpp")
    assert m.oracle_ids == m.backend_ids
    assert "oracle \"Hello, world. I'm here\" vs backend \"Hello , world . I 'm here\"" in m.evidence
    # without --decode the same run agrees: the ids are the same
    plain = run_compare(["llama-bpe"], [str(corpus)], ["hf", "ref"], CompareOptions(known=None))
    assert plain.mismatches == []
