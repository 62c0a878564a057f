"""Each rule of the classifier's table (tokparity.diff.classify.RULES) on a real case.

The ids come from real libraries (SentencePiece, tokenizers, llama.cpp, transformers' GGUF
converter), from the planted-bug engines of tests/engines run as the real library with one
setting changed, or from tokparity's reference with one switch flipped (the variants the
diagnosis uses). Texts come from real runs of ``tokparity compare`` with those backends. Every
test names the rule that must decide the case; the last test checks that every rule has one.

The misnamings of issue 16 are pinned here too: ``unk-merge`` only for one <unk> against
several over the same span, ``ignore-merges`` only for a whole pre-token, never ``merge-order``
for an <unk> against nothing, ``viterbi-tie`` for segmentations of equal score, and
``pre-tokenizer`` for a ``cmd:`` engine that exposes no stage.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tokparity.diagnose.candidate import fork
from tokparity.diff.classify import RULES, Stages, classify, rule_of
from tokparity.reference import RefTokenizer
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions
from tokparity.vocab import load_vocab

ENGINES = Path(__file__).parent.parent / "engines"
sys.path.insert(0, str(ENGINES))
from unigram_engine import planted  # noqa: E402

sentencepiece = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")


def judge(text, a, b, vocab, **kw):
    """(the classification, the name of the rule that gave it)."""
    return classify(text, a, b, vocab, **kw), rule_of(text, a, b, vocab, **kw)


def one_case_run(tmp_path, model, backend, texts):
    """``tokparity compare MODEL -b BACKEND`` on ``texts`` (no known list): the mismatches by case id."""
    corpus = tmp_path / "cases.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "text": t, "tags": {}}) + "\n" for k, t in texts.items()), "utf-8")
    results = run_compare([model], [str(corpus)], [backend], CompareOptions(explicit_backends=True))
    return {m.case_id: m for m in results.mismatches if m.backend == backend}


class Unigram:
    """SentencePiece on a zoo model's .model, the same with a planted bug, and the vocabulary."""

    def __init__(self, path):
        self.vocab = load_vocab(path)
        self.oracle = sentencepiece.SentencePieceProcessor(model_file=str(path))
        self.raw = Path(path).read_bytes()

    def engine(self, bug):
        return sentencepiece.SentencePieceProcessor(model_proto=planted(self.raw, bug))


@pytest.fixture(scope="module")
def botchan(zoo):
    return Unigram(zoo("botchan-unigram").files["spm_model"])


@pytest.fixture(scope="module")
def kyoto(zoo):
    return Unigram(zoo("kyoto-ja-unigram").files["spm_model"])


# --- the run failed, or did not differ --------------------------------------------------------------


def test_backend_failed_crash_astral_engine(tmp_path, zoo):
    """backend_failed: the unigram engine that aborts on any character beyond the BMP."""
    zoo("botchan-unigram")
    engine = f"cmd:{{python}} {ENGINES / 'unigram_engine.py'} {{spm_model}} --bug crash-astral"
    found = one_case_run(tmp_path, "botchan-unigram", engine, {"llama": "a 🦙", "plain": "a b"})
    assert set(found) == {"llama"}
    assert found["llama"].cls == "crash", found["llama"].evidence
    c, rule = judge("a 🦙", [], [], load_vocab(zoo("botchan-unigram").files["spm_model"]), status="crash",
                    detail=found["llama"].evidence)
    assert (c.cls, rule) == ("crash", "backend_failed")


def test_ids_equal(botchan):
    ids = botchan.oracle.encode("Hello world")
    c, rule = judge("Hello world", ids, botchan.engine("none").encode("Hello world"), botchan.vocab)
    assert (c.cls, rule, c.evidence) == ("unclassified", "ids_equal", "the ids are equal")


# --- specials ------------------------------------------------------------------------------------------


def test_unk_text_parsed_tokenizers_parses_unk(botchan, zoo):
    """tokenizers always parses special-token text: '<unk>' in the input becomes the token, where
    SentencePiece reads '<', 'unk', '>' (botchan has no '<' or '>' piece). Once named unk-merge."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    hf = tokenizers.Tokenizer.from_file(str(zoo("botchan-unigram").files["tokenizer_json"]))
    for text, times in (("x<unk>y", "once"), ("<unk><unk>", "2 times")):
        oracle, other = botchan.oracle.encode(text), hf.encode(text, add_special_tokens=False).ids
        c, rule = judge(text, oracle, other, botchan.vocab)
        assert (c.cls, rule) == ("special-parsing", "unk_text_parsed"), c.evidence
        assert f"that text {times}" in c.evidence and "the backend writes <unk> for '<unk>" in c.evidence


def test_whitespace_beside_special_phi3_two_spaces(zoo):
    """Phi-3's <|end|> strips the whitespace after it (llama.cpp); transformers' GGUF converter
    keeps two spaces as '▁▁': not one '▁' more, so whitespace_beside_special, not the one-space rule."""
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from tokparity.backends.registry import make_backend

    model = zoo("phi-3")
    path = model.files["gguf"]
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    text = "a <|end|>  b"
    data = text.encode()
    buf = (llama_cpp.llama_token * (len(data) + 8))()
    n = llama_cpp.llama_tokenize(llama_cpp.llama_model_get_vocab(llm.model), data, len(data), buf, len(buf), False, True)
    oracle = list(buf[:n])
    hf_gguf = make_backend("hf-gguf", model)
    try:
        other = hf_gguf.encode(text, False, True)
    finally:
        hf_gguf.close()
    assert oracle == [263, 29871, 32007, 289] and other == [263, 29871, 32007, 259, 289]
    c, rule = judge(text, oracle, other, load_vocab(path))
    assert (c.cls, rule) == ("special-strip", "whitespace_beside_special")
    assert c.evidence == "whitespace next to special '<|end|>' differs: oracle [] vs backend [259 '▁▁']"


# --- <unk> and byte tokens ---------------------------------------------------------------------------


def test_unk_per_run_reference_without_merged_unknowns(botchan):
    """unk_per_run: SentencePiece writes one <unk> for '日本' (no such pieces in botchan); the
    reference with merge_unk_runs off (the variant unk.merge-runs) writes one per character."""
    text = "a 日本 b"
    per_char = fork(RefTokenizer(botchan.vocab).pipeline, merge_unk_runs=False)
    oracle, other = botchan.oracle.encode(text), per_char.encode(text, False, False)
    assert (oracle, other) == ([11, 4, 0, 80], [11, 4, 0, 0, 80])
    c, rule = judge(text, oracle, other, botchan.vocab)
    assert (c.cls, rule) == ("unk-merge", "unk_per_run")
    assert "the same span (after '▁', before '▁b') holds 1 <unk> on the oracle's side and 2" in c.evidence


@pytest.mark.parametrize("text", [
    pytest.param("«\xa0Où as-tu mis les clés de la voiture\xa0?\xa0» a demandé ma sœur.", id="fr-0003"),
    pytest.param("这家饭馆的饺子特别好吃，我们下次再来吧。", id="zh-Hans-0003"),
])
def test_unk_counts_differ_for_another_reason_is_no_unk_merge(kyoto, text):
    """Issue 16's false unk-merge: without its charsmap the engine keeps '\\xa0' or '，' unknown
    (one <unk> with its neighbours) where SentencePiece normalizes it to a piece: the <unk>
    counts differ, but no span holds one <unk> against several."""
    oracle, other = kyoto.oracle.encode(text), kyoto.engine("no-nfkc").encode(text)
    assert oracle.count(0) != other.count(0)
    c, rule = judge(text, oracle, other, kyoto.vocab)
    assert (c.cls, rule) == ("normalization", "unk_for_normalized_text"), c.evidence
    assert "one <unk> per run" not in c.evidence and "NFKC changes" in c.evidence


def test_unk_for_normalized_text_decomposed_accent(kyoto):
    """'cafe' + U+0301: SentencePiece composes 'é' (a piece), the engine without charsmap writes
    'e' + <unk> for the lone mark; the decoded texts differ, NFKC shows how."""
    text = "cafe\u0301"
    oracle, other = kyoto.oracle.encode(text), kyoto.engine("no-nfkc").encode(text)
    c, rule = judge(text, oracle, other, kyoto.vocab)
    assert (c.cls, rule) == ("normalization", "unk_for_normalized_text")
    assert "the backend writes <unk> for '\\u0301' where the oracle has [7592 'é']" in c.evidence
    assert "NFKC changes 'e\\u0301' to 'é'" in c.evidence


def test_unk_for_normalized_text_composed_form_unknown_too(botchan):
    """botchan has no 'é': SentencePiece composes 'e' + U+0301 and writes one <unk>; without the
    charsmap the engine has 'e' and an <unk> for the mark. Both sides have <unk>; NFKC still shows
    where they part."""
    for text in ("cafe\u0301", "e\u0301"):
        oracle, other = botchan.oracle.encode(text), botchan.engine("no-nfkc").encode(text)
        c, rule = judge(text, oracle, other, botchan.vocab)
        assert (c.cls, rule) == ("normalization", "unk_for_normalized_text")
        assert "NFKC changes 'e\\u0301' to 'é'" in c.evidence and "the oracle has only <unk> (and spaces) there" in c.evidence


def test_unk_against_nothing_is_no_merge_order(botchan):
    """Issue 16's "<unk> against nothing is merge-order, same text ''": NFKC makes a leading
    no-break space a space that SentencePiece strips; without the charsmap it is an <unk>."""
    text = "\xa0leading nbsp"
    oracle, other = botchan.oracle.encode(text), botchan.engine("no-nfkc").encode(text)
    assert other[:2] == [4, 0] and 0 not in oracle
    c, rule = judge(text, oracle, other, botchan.vocab)
    assert (c.cls, rule) == ("normalization", "unk_for_normalized_text")
    assert c.evidence.startswith("the backend writes <unk> for '\\xa0' where the oracle has nothing")


@pytest.mark.parametrize("text, evidence", [
    pytest.param("end with newline\n", "the oracle writes <unk> for '\\n' where the backend has nothing", id="0090"),
    pytest.param("\n\nhello\n\n", "the oracle writes <unk> for '\\n\\n' where the backend has nothing", id="0086"),
])
def test_unk_for_dropped_whitespace_tokenizers_strips(botchan, zoo, text, evidence):
    """tokenizers on the tokenizer.json transformers' converter writes strips trailing newlines
    (Strip right) that SentencePiece keeps as <unk> (botchan has no newline piece). Once named
    merge-order ("same text ''") and unk-merge."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    hf = tokenizers.Tokenizer.from_file(str(zoo("botchan-unigram").files["tokenizer_json"]))
    oracle, other = botchan.oracle.encode(text), hf.encode(text, add_special_tokens=False).ids
    c, rule = judge(text, oracle, other, botchan.vocab)
    assert (c.cls, rule) == ("whitespace-collapse", "unk_for_dropped_whitespace")
    assert evidence in c.evidence and "whitespace the oracle keeps (as <unk>) and the backend does not" in c.evidence


def test_bytes_on_one_side_reference_without_byte_fallback(zoo):
    """llama-spm falls back to <0xNN> pieces for 🦙; the reference with byte_fallback off (the
    variant bytes.fallback) writes <unk>."""
    vocab = load_vocab(zoo("llama-spm").files["gguf"])
    ref = RefTokenizer(vocab)
    oracle, other = ref.encode("🦙"), fork(ref.pipeline, byte_fallback=False).encode("🦙", False, False)
    assert (oracle, other) == ([29871, 243, 162, 169, 156], [29871, 0])
    c, rule = judge("🦙", oracle, other, vocab)
    assert (c.cls, rule) == ("byte-fallback", "bytes_on_one_side")
    assert "the oracle has byte tokens where the backend has 1 <unk>" in c.evidence


# --- the two sides tokenized different texts ------------------------------------------------------------


@pytest.fixture(scope="module")
def botchan_bpe_hf_gguf(zoo):
    """botchan-bpe (SentencePiece BPE, no <0xNN> pieces) under transformers' GGUF converter, which
    builds a BPE model with byte_fallback on and no unk token, and no normalizer; the reference
    for the oracle's stages; SentencePiece, the oracle."""
    pytest.importorskip("transformers", reason="transformers is not installed")
    from tokparity.backends.registry import make_backend

    model = zoo("botchan-bpe")
    hf_gguf, ref = make_backend("hf-gguf", model), make_backend("ref", model)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model.files["spm_model"]))
    yield sp, hf_gguf, ref, load_vocab(model.files["spm_model"])
    hf_gguf.close()


@pytest.mark.parametrize("text, case", [("#", "ascii-0004"), ("1#2", "digits"), ("a#b", "joined")])
def test_unk_for_dropped_text_gguf_converter_drops_characters(botchan_bpe_hf_gguf, text, case):
    """known_divergences.toml's hf-gguf-spm-without-byte-pieces-drops-characters: SentencePiece
    writes <unk> for '#', transformers' model drops it. Once merge-order "same text ''" (or
    whitespace-runs, or no class at all once <unk> against nothing stopped being merge-order)."""
    sp, hf_gguf, _, vocab = botchan_bpe_hf_gguf
    oracle, other = sp.encode(text), hf_gguf.encode(text)
    assert 0 in oracle and 0 not in other
    c, rule = judge(text, oracle, other, vocab)
    assert (c.cls, rule) == ("byte-fallback", "unk_for_dropped_text"), c.evidence
    assert "the oracle writes <unk> for '#' where the backend has" in c.evidence


def test_normalizers_disagree_kelvin_sign(botchan_bpe_hf_gguf):
    """Both sides expose their normalizer: SentencePiece's charsmap makes the Kelvin sign 'K', the
    GGUF converter has no normalizer (and then drops the sign, which no piece covers)."""
    from tokparity.run.stages import first_stage

    sp, hf_gguf, ref, vocab = botchan_bpe_hf_gguf
    text = "\u212a"
    stage, a_stages, b_stages = first_stage(ref, hf_gguf, text)
    assert (stage, a_stages.normalized, b_stages.normalized) == ("normalize", "▁K", text)
    oracle, other = sp.encode(text), hf_gguf.encode(text)
    c, rule = judge(text, oracle, other, vocab, a_stages=a_stages, b_stages=b_stages)
    assert (c.cls, rule) == ("normalization", "normalizers_disagree")


def test_no_rule_fits_escape_sequence(botchan_bpe_hf_gguf):
    """'\\x1b[31mred\\x1b[0m': SentencePiece's normalizer removes the escapes and writes <unk> for
    '3'; the GGUF converter drops '3'. The decoded texts are equal and the <unk> cannot be read
    off (the oracle's pieces do not spell the input): for a backend that exposes no stage (a
    cmd: engine), no class is claimed; with both normalizers in view, they disagree."""
    from tokparity.run.stages import first_stage

    sp, hf_gguf, ref, vocab = botchan_bpe_hf_gguf
    text = "\x1b[31mred\x1b[0m"
    oracle, other = sp.encode(text), hf_gguf.encode(text)
    c, rule = judge(text, oracle, other, vocab)
    assert (c.cls, rule) == ("unclassified", "no_rule_fits")
    assert "oracle [0 '<unk>'] vs backend []" in c.evidence
    _, a_stages, b_stages = first_stage(ref, hf_gguf, text)
    c, rule = judge(text, oracle, other, vocab, a_stages=a_stages, b_stages=b_stages)
    assert (c.cls, rule) == ("normalization", "normalizers_disagree_beside_unk")


def test_collapsed_whitespace_keep_whitespace_engine(botchan):
    """The T5 bug (tokenizers #1250): remove_extra_whitespaces lost, '  ' kept as two '▁'."""
    oracle, other = botchan.oracle.encode("a  b"), botchan.engine("keep-whitespace").encode("a  b")
    assert (oracle, other) == ([11, 80], [11, 4, 80])
    c, rule = judge("a  b", oracle, other, botchan.vocab)
    assert (c.cls, rule) == ("whitespace-collapse", "collapsed_whitespace")


def test_cut_short_iree_output_buffer(zoo):
    """iree-tokenizer 0.3.0 keeps half a text's bytes plus 16 ids: this text of 38 bytes gets 35
    of its 36 ids. The ids it gives are tokenizers' first 35."""
    iree = pytest.importorskip("iree.tokenizer", reason="iree-tokenizer is not installed: pip install -e '.[test]'")
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    path = str(zoo("llama-bpe").files["tokenizer_json"])
    text = "ᐃᒡᓗᒧᑦ ᐊᐅᓪᓚᖅᑐᖓ."
    oracle = tokenizers.Tokenizer.from_file(path).encode(text, add_special_tokens=False).ids
    backend = list(iree.Tokenizer.from_file(path).encode(text, add_special_tokens=False))
    assert (len(oracle), len(backend), backend) == (36, 35, oracle[:35])
    c, rule = judge(text, oracle, backend, load_vocab(path))
    assert (c.cls, rule) == ("ids-cut-short", "cut_short")
    assert c.evidence.startswith("the backend gives the oracle's first 35 of 36 ids and stops"), c.evidence


def test_cut_short_not_where_the_ids_left_out_spell_nothing(zoo):
    """A control token that is no BOS or EOS, left out at the end, spells no text: both sides spell
    the same text, so no ids were cut."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    path = str(zoo("llama-bpe").files["tokenizer_json"])
    vocab = load_vocab(path)
    ids = tokenizers.Tokenizer.from_file(path).encode("Hello world", add_special_tokens=False).ids
    reserved = vocab.id_of("<|reserved_special_token_0|>")
    assert reserved is not None and reserved not in vocab.special_ids.values()
    c, rule = judge("Hello world", ids + [reserved], ids, vocab)
    assert c.cls != "ids-cut-short" and rule != "cut_short", (c.cls, rule)


def test_other_text_mongolian_narrow_space(kyoto):
    """Honestly unclassified: NFKC makes U+202F a space between two unknown words; without the
    charsmap the engine has one <unk> for both. The <unk> hide which characters differ, and no
    span holds one <unk> against several (it was unk-merge, with false evidence)."""
    text = "ᠪᠢ ᠤᠯᠠᠭᠠᠨᠪᠠᠭᠠᠲᠤᠷ\u202fᠲᠤ ᠠᠮᠢᠳᠤᠷᠳᠠᠭ᠃"
    oracle, other = kyoto.oracle.encode(text), kyoto.engine("no-nfkc").encode(text)
    assert (oracle, other) == ([6, 0] * 4, [6, 0] * 3)
    c, rule = judge(text, oracle, other, kyoto.vocab)
    assert (c.cls, rule) == ("unclassified", "other_text")


# --- the same text, other tokens ----------------------------------------------------------------------


def _llama_encode(path, text):
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    data = text.encode()
    buf = (llama_cpp.llama_token * (len(data) + 8))()
    n = llama_cpp.llama_tokenize(llama_cpp.llama_model_get_vocab(llm.model), data, len(data), buf, len(buf), False,
                                 False)
    return list(buf[:n])


def test_viterbi_tie_kyoto_000(kyoto, zoo):
    """known_divergences.toml's llama-cpp-ugm-viterbi-ties: '000' as '00' + '0' (SentencePiece) or
    '0' + '00' (llama.cpp), the same pieces, the same score. Once named merge-order."""
    text = "1_000_000"
    oracle, other = kyoto.oracle.encode(text), _llama_encode(zoo("kyoto-ja-unigram").files["gguf"], text)
    assert oracle != other
    c, rule = judge(text, oracle, other, kyoto.vocab)
    assert (c.cls, rule) == ("viterbi-tie", "viterbi_tie")
    assert "oracle [814 '00', 584 '0'] vs backend [584 '0', 814 '00']" in c.evidence
    assert re.search(r"both segmentations hold the same text and score the same under the model \(-16\.97\d*\): a tie", c.evidence)


def test_viterbi_tie_beside_unknown_characters(kyoto, zoo):
    """The same ties in llama.cpp's own test text, which has <unk> elsewhere (emoji): difflib cuts
    '33' + '3' against '3' + '33' into an insert and a delete; joined into one stretch, they tie."""
    from tokparity.corpus import load_corpus

    text = next(case.text for case in load_corpus("llama.cpp-tests") if case.id == "llama.cpp-llama-spm-45")
    oracle, other = kyoto.oracle.encode(text), _llama_encode(zoo("kyoto-ja-unigram").files["gguf"], text)
    assert oracle != other and 0 in oracle
    c, rule = judge(text, oracle, other, kyoto.vocab)
    assert (c.cls, rule) == ("viterbi-tie", "viterbi_tie"), c.evidence
    assert "oracle [1410 '33', 33 '3'] vs backend [33 '3', 1410 '33']" in c.evidence


def test_pre_tokenizers_disagree_both_splits_known(zoo):
    """tokenizers with Llama 3's split against the same file with GPT-2's default ByteLevel split,
    each exposing its pre-tokenizer (pre_tokenize_str)."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    data = json.loads(zoo("llama-bpe").files["tokenizer_json"].read_text("utf-8"))
    right = tokenizers.Tokenizer.from_str(json.dumps(data))
    data["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    wrong = tokenizers.Tokenizer.from_str(json.dumps(data))
    text = "pay 3333333 now"
    a, b = (t.encode(text, add_special_tokens=False).ids for t in (right, wrong))
    stages = [Stages(pre_tokens=[p for p, _ in t.pre_tokenizer.pre_tokenize_str(text)]) for t in (right, wrong)]
    c, rule = judge(text, a, b, load_vocab(zoo("llama-bpe").files["gguf"]), a_stages=stages[0], b_stages=stages[1])
    assert (c.cls, rule) == ("pre-tokenizer", "pre_tokenizers_disagree")


def test_crosses_oracle_split_cmd_engine(tmp_path, zoo):
    """A cmd: engine exposes no stage; the oracle's split (the reference's, byte-level 'Ġ' pieces)
    is enough to see a digit run taken whole across Llama 3's groups of three. Before, texts with
    a space or a non-ASCII letter got merge-order (the byte-level pieces were measured as UTF-8)."""
    zoo("llama-bpe")
    engine = f"cmd:{{python}} {ENGINES / 'bpe_engine.py'} {{tokenizer_json}} --bug digits"
    texts = {"en-0003": "My grandmother turned 90 on 14 March 2023, and the whole family came to celebrate.",
             "vi-0003": "Ngày 2 tháng 9 năm 1945 là ngày Quốc khánh của Việt Nam.",
             "ja-0006": "私の誕生日は２０００年５月３日です。"}
    found = one_case_run(tmp_path, "llama-bpe", engine, texts)
    assert set(found) == set(texts)
    for case, m in found.items():
        assert m.cls == "pre-tokenizer", (case, m.evidence)
        assert "crosses a boundary of the oracle's pre-tokenizer split" in m.evidence
    assert found["en-0003"].evidence.startswith("backend token 1419 '23' crosses")
    # '００' on the backend is a whole token, but not a word of the oracle's split: no ignore-merges
    assert "ï¼Ĳï¼Ĳ" in found["ja-0006"].evidence


def test_odd_code_point_gpt2_split_on_llama3(zoo):
    """tokenizers on Llama 3's file with GPT-2's ByteLevel split: the split differs at the zero
    width non-joiner of a Persian word ('می\u200cبارد'); the backend splits there, no backend token
    crosses the oracle's split."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    data = json.loads(zoo("llama-bpe").files["tokenizer_json"].read_text("utf-8"))
    right = tokenizers.Tokenizer.from_str(json.dumps(data))
    data["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    wrong = tokenizers.Tokenizer.from_str(json.dumps(data))
    text = "امروز هوا خیلی سرد است و برف می\u200cبارد."
    a, b = (t.encode(text, add_special_tokens=False).ids for t in (right, wrong))
    split = Stages(pre_tokens=[p for p, _ in right.pre_tokenizer.pre_tokenize_str(text)])
    c, rule = judge(text, a, b, load_vocab(zoo("llama-bpe").files["gguf"]), a_stages=split)
    assert (c.cls, rule) == ("unicode-categories", "odd_code_point")
    assert c.evidence.startswith("the split differs at U+200C (Cf, ZERO WIDTH NON-JOINER)")


def test_every_rule_has_a_real_case():
    """Each rule of the table is named by a test of this folder."""
    tested = "".join(p.read_text("utf-8") for p in Path(__file__).parent.glob("test_classify*.py"))
    missing = [rule.__name__ for rule in RULES if f'"{rule.__name__}"' not in tested]
    assert not missing, f"rules without a test on a real case: {missing}"


def test_every_class_given_is_explained():
    """classes.toml, the one list of classes, explains every class the judges give: each class
    name written in the code of tokparity.diff and tokparity.run, and no name there is missing."""
    import re

    import tokparity
    from tokparity.diff.classify import CLASSES
    from tokparity.diff.explain import class_info

    package = Path(tokparity.__file__).parent
    given = set()
    for path in [*package.glob("diff/*.py"), *package.glob("run/*.py")]:
        code = path.read_text("utf-8")
        given |= set(re.findall(r'(?:found|_found|Verdict\.differs)\(\s*"([a-z][a-z-]+)"', code))
        given |= set(re.findall(r'return \(?"([a-z]+-[a-z-]+|crash|timeout)", f?"', code))
    assert given, "no class name found in the code: the patterns above are stale"
    assert given <= set(CLASSES), sorted(given - set(CLASSES))
    assert class_info("viterbi-tie")["implication"].startswith("a tie, not a bug")
