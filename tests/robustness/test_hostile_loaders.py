"""Hostile tokenizer files: every load ends in a Vocab or in one clear line naming the file, within
a time limit and an address-space limit (issue #9). The longer campaign is the nox session
``python -m tools.robustness.loaders --seconds N --seed S``; this is its fixed budget."""

from __future__ import annotations

import json
import random
import struct

import gguf_builder as gb
import pytest

from tokparity.errors import BadModelFile, TokparityError
from tokparity.reference.charsmap import CharsMap
from tokparity.vocab import TokenType, load_vocab
from tools.robustness import loaders
from tools.robustness import mutators as mut
from tools.robustness.loaders import BAD, CLEAR, OK, LoaderPool, LoaderWorker, check_loader

SEED = 9  # issue #9


@pytest.fixture(scope="module")
def pool():
    with LoaderPool(workers=2) as p:
        yield p


@pytest.fixture(scope="module")
def files(zoo) -> dict[str, bytes]:
    """The seed files: small ones, one per loader, a charsmap and merges among them."""
    return {
        "gguf": zoo("llama-spm").files["gguf"].read_bytes(),
        "ugm-gguf": zoo("nomic-bert-moe").files["gguf"].read_bytes(),
        "bpe-gguf": zoo("deepseek-coder").files["gguf"].read_bytes(),
        "spm": zoo("botchan-unigram").files["spm_model"].read_bytes(),
        "json": zoo("lenml-llama2").files["tokenizer_json"].read_bytes(),
    }


def _run(pool, recipes) -> dict[str, list[tuple[str, str]]]:
    """Outcome kind -> [(mutant name, detail)]."""
    found: dict[str, list[tuple[str, str]]] = {OK: [], CLEAR: [], BAD: []}
    for _, mutant, outcome in pool.map((None, r) for r in recipes):
        found[outcome.kind].append((mutant.name, outcome.detail))
    return found


def _assert_no_bad(found) -> None:
    bad = "\n".join(f"  {name}: {detail}" for name, detail in found[BAD][:20])
    assert not found[BAD], f"{len(found[BAD])} hostile files were not a clear error:\n{bad}"


# ---------------------------------------------------------------------------------------------
# The fixed budget: structural truncations, seeded samples of every mutator, per format


def test_every_structural_truncation_of_a_gguf_is_a_clear_error(pool, files):
    layout = mut.GGUFLayout(files["gguf"])
    points = mut.gguf_truncations(layout, random.Random(SEED), per_array=16)
    tokens = layout.record("tokenizer.ggml.tokens")
    assert sum(p <= tokens.type_at + 16 for p in points) >= 60  # header and every key before the tokens
    recipes = [mut.Recipe(f"gguf/truncate@{p}", mut._cut, (files["gguf"], p), "t.gguf") for p in points]
    found = _run(pool, recipes)
    _assert_no_bad(found)
    assert found[OK] == []  # every cut loses part of the metadata
    assert len(found[CLEAR]) == len(points)


@pytest.mark.parametrize("source, sample", [
    pytest.param("gguf", 250, id="llama-spm"),
    pytest.param("bpe-gguf", 80, id="deepseek-coder-merges"),
])
def test_gguf_structural_mutants(pool, files, source, sample):
    rng = random.Random(SEED)
    recipes = mut.gguf_structural(mut.GGUFLayout(files[source]), rng, "m.gguf", per_array=4)
    named = [r for r in recipes if r.name.startswith(("gguf/version", "gguf/magic", "gguf/n_kv", "gguf/count",
                                                      "gguf/retype-array"))
             or "wrong-type tokenizer.ggml.tokens" in r.name or "wrong-type tokenizer.ggml.merges" in r.name]
    found = _run(pool, named + rng.sample([r for r in recipes if r not in named], sample))
    _assert_no_bad(found)
    assert len(found[CLEAR]) > sample


def test_hostile_charsmaps_in_a_gguf(pool, files):
    """nomic-bert-moe's charsmap, made hostile, in a small UGM GGUF: the loader keeps the bytes
    and the worker's probe walks them with the reference parser."""
    layout = mut.GGUFLayout(files["ugm-gguf"])
    rec = layout.record("tokenizer.ggml.precompiled_charsmap")
    blob = files["ugm-gguf"][rec.type_at + 16:rec.end]
    recipes = [mut.Mutant(f"gguf/charsmap {label}", _small_ugm_gguf(bad), "m.gguf")
               for label, bad in mut.hostile_charsmaps(blob, random.Random(SEED))]
    found = _run(pool, recipes)
    _assert_no_bad(found)
    # An empty blob is no charsmap; random units may happen to stay inside the arrays.
    harmless = {"gguf/charsmap empty", *(f"gguf/charsmap random-units-{k}" for k in range(3))}
    assert {name for name, _ in found[OK]} <= harmless


def test_spm_model_truncations_and_structural_mutants(pool, files):
    rng = random.Random(SEED)
    data = files["spm"]
    recipes = [mut.Recipe(f"spm/truncate@{p}", mut._cut, (data, p), "m.model")
               for p in mut.spm_truncations(data, rng, pieces=8)]
    structural = mut.spm_structural(data, rng, "m.model", pieces=2)
    named = [r for r in structural if not r.name.startswith(("spm/length", "spm/wrong-wire", "spm/bad-wire",
                                                                 "spm/runaway", "spm/duplicate", "spm/drop"))]
    recipes += named + rng.sample([r for r in structural if r not in named], 150)
    found = _run(pool, recipes)
    _assert_no_bad(found)
    # A cut right between two pieces leaves a valid, smaller ModelProto (SentencePiece reads it
    # too); any other cut is a clear error.
    field_starts = {f"spm/truncate@{start}" for start, *_ in mut.pb_walk(data)}
    assert {name for name, _ in found[OK] if "truncate" in name} <= field_starts


def _small_bpe_json(data: bytes, n: int = 2000) -> bytes:
    """lenml-llama2's tokenizer.json, every stage kept, cut to its first ``n`` ids (fast to load)."""
    doc = json.loads(data)
    model = doc["model"]
    vocab = {t: i for t, i in model["vocab"].items() if i < n}
    merges = [m for m in model["merges"] if all(p in vocab for p in (*m.split(" ", 1), m.replace(" ", "", 1)))]
    return json.dumps({**doc, "model": {**model, "vocab": vocab, "merges": merges}}, ensure_ascii=False).encode()


def _unigram_json(spm: bytes, tmp_path) -> bytes:
    """botchan's .model as a Unigram tokenizer.json with a Precompiled normalizer (its charsmap)."""
    (tmp_path / "b.model").write_bytes(spm)
    v = load_vocab(tmp_path / "b.model")
    return mut.unigram_json(v.tokens, v.scores, v.precompiled_charsmap)


@pytest.mark.parametrize("kind", ["bpe", "unigram"])
def test_hf_json_structural_mutants(pool, files, tmp_path, kind):
    rng = random.Random(SEED)
    data = _small_bpe_json(files["json"]) if kind == "bpe" else _unigram_json(files["spm"], tmp_path)
    recipes = mut.hf_json_structural(data, rng, "tokenizer.json")
    if kind == "unigram":
        assert sum("normalizer charsmap" in r.name for r in recipes) >= 15
    found = _run(pool, recipes)
    _assert_no_bad(found)
    assert len(found[CLEAR]) > 60


@pytest.mark.parametrize("source, filename", [
    pytest.param("gguf", "m.gguf", id="gguf"),
    pytest.param("spm", "m.model", id="spm-model"),
    pytest.param("json", "tokenizer.json", id="hf-json"),
])
def test_random_bit_flips(pool, files, source, filename):
    rng = random.Random(f"{SEED}-{source}")
    data = files[source] if source != "json" else _small_bpe_json(files[source])
    structural = None
    if source == "gguf":  # half of the flips on the framing, where they hurt
        layout = mut.GGUFLayout(data)
        structural = [i for s in layout.spans if s.kind not in ("string", "elements", "key")
                      for i in range(s.start, s.end)]
    recipes = []
    for k in range(50):
        flipped, where = mut.flip_bits(data, rng, rng.randint(1, 4), structural if k % 2 else None)
        recipes.append(mut.Mutant(f"{source}/flip {where}", flipped, filename))
    _assert_no_bad(_run(pool, recipes))


# ---------------------------------------------------------------------------------------------
# Named cases


def _gguf_file(tmp_path, *kvs: bytes, name: str = "bad.gguf"):
    p = tmp_path / name
    p.write_bytes(gb.gguf(*kvs))
    return p


MODEL = gb.kv_string("tokenizer.ggml.model", "llama")


def _small_ugm_gguf(charsmap: bytes) -> bytes:
    array_header = struct.pack("<IIQ", gb.ARRAY, gb.UINT8, len(charsmap))
    return gb.gguf(gb.kv_string("tokenizer.ggml.model", "t5"), gb.kv_strings("tokenizer.ggml.tokens", ["<unk>", "a"]),
                   gb.gstr("tokenizer.ggml.precompiled_charsmap") + array_header + charsmap)


@pytest.mark.parametrize("kv, message", [
    pytest.param(gb.kv_strings("tokenizer.ggml.tokens", ["a"], claimed=2**63), "claims 9223372036854775808 strings",
                 id="string-array-2**63"),
    pytest.param(gb.gstr("tokenizer.ggml.scores") + struct.pack("<IIQ", gb.ARRAY, gb.FLOAT32, 2**63),
                 "claims 9223372036854775808 float32 values", id="float-array-2**63"),
    pytest.param(gb.gstr("x") + struct.pack("<IIQ", gb.ARRAY, gb.ARRAY, 2**63), "claims 9223372036854775808 nested",
                 id="nested-array-2**63"),
    pytest.param(gb.gstr("x") + struct.pack("<IQ", gb.STRING, 2**32) + b"abc", "truncated at byte",
                 id="string-length-2**32"),
    pytest.param(struct.pack("<Q", 2**64 - 1) + b"key", "truncated at byte", id="key-length-2**64-1"),
])
def test_absurd_lengths_allocate_nothing(tmp_path, kv, message):
    """Run under the address-space limit: believing the length would be a MemoryError (bad)."""
    p = _gguf_file(tmp_path, MODEL, kv)
    outcome = check_loader(p)
    assert outcome.kind == CLEAR, outcome
    assert message in outcome.detail


def test_string_length_past_end_of_file(tmp_path):
    data = gb.gguf(MODEL, gb.kv_string("tokenizer.ggml.pre", "default"))
    # the last string claims one byte more than the file holds
    p = tmp_path / "past.gguf"
    p.write_bytes(data[:-15] + struct.pack("<Q", 8) + data[-7:])
    with pytest.raises(BadModelFile, match=r"truncated at byte \d+ while reading 'tokenizer.ggml.pre' \(needs 8 bytes"):
        load_vocab(p)


@pytest.mark.parametrize("label", ["array[int32]", "uint32", "array[array]", "array[string]-empty"])
def test_wrong_value_type_for_tokens(tmp_path, files, label):
    layout = mut.GGUFLayout(files["gguf"])
    _, vtype, payload = next(w for w in mut.WRONG_VALUES if w[0] == label)
    p = tmp_path / "m.gguf"
    p.write_bytes(mut._replace_value(files["gguf"], layout.record("tokenizer.ggml.tokens"), vtype, payload))
    if label == "array[string]-empty":  # the right type, but then scores and types do not match it
        match = "has 32000 entries but the vocabulary has 0 tokens"
    else:
        match = "key 'tokenizer.ggml.tokens' has type "
    with pytest.raises(BadModelFile, match=match):
        load_vocab(p)


def test_uint32_token_types_read_as_int32_like_llama_cpp(tmp_path):
    """0xFFFFFFFF in a uint32 token_type array used to reach the fingerprint as 4294967295 (an
    OverflowError in ``inspect``); llama.cpp reads the array as int32, so it is -1."""
    p = _gguf_file(tmp_path, MODEL, gb.kv_strings("tokenizer.ggml.tokens", ["a", "b"]),
                   gb.gstr("tokenizer.ggml.token_type") + struct.pack("<IIQII", gb.ARRAY, gb.UINT32, 2, 1, 2**32 - 1))
    vocab = load_vocab(p)
    assert vocab.token_types == [1, -1]
    assert len(vocab.fingerprint) == 16


def test_unknown_token_type_is_undefined(tmp_path):
    """Any int32 can sit in token_type; the diff engine asks every token's type."""
    p = _gguf_file(tmp_path, MODEL, gb.kv_strings("tokenizer.ggml.tokens", ["a", "b"]),
                   gb.kv_int32s("tokenizer.ggml.token_type", [1, 99]))
    vocab = load_vocab(p)
    assert (vocab.type_of(0), vocab.type_of(1)) == (TokenType.NORMAL, TokenType.UNDEFINED)
    assert vocab.type_counts() == {"normal": 1, "type-99": 1}


def test_duplicated_key_in_a_real_file(tmp_path, files):
    layout = mut.GGUFLayout(files["gguf"])
    rec = layout.record("tokenizer.ggml.bos_token_id")
    p = tmp_path / "dup.gguf"
    p.write_bytes(mut._insert_record(files["gguf"], rec.end, files["gguf"][rec.start:rec.end]))
    with pytest.raises(BadModelFile, match="duplicate metadata key 'tokenizer.ggml.bos_token_id'"):
        load_vocab(p)


def test_corrupt_key_shows_as_one_short_line(tmp_path):
    p = _gguf_file(tmp_path, MODEL, gb.gstr("evil\nkey" + "x" * 5000) + struct.pack("<I", 99))
    with pytest.raises(BadModelFile) as e:
        load_vocab(p)
    assert "\n" not in str(e.value) and len(str(e.value)) < 300
    assert "'evil\\nkeyxxx" in str(e.value) and "(5008 characters) has unknown value type 99" in str(e.value)


def test_deeply_nested_arrays_are_refused(tmp_path):
    p = _gguf_file(tmp_path, MODEL, gb.gstr("x") + struct.pack("<I", gb.ARRAY) + struct.pack("<IQ", gb.ARRAY, 1) * 5000
                   + struct.pack("<IQ", gb.UINT8, 0))
    with pytest.raises(BadModelFile, match="nests arrays more than 8 deep"):
        load_vocab(p)


@pytest.mark.parametrize("label", ["trie-size=2**32-1", "trie-size=blob", "half", "offsets-past-strings",
                                   "root-base-out-of-bounds"])
def test_charsmap_out_of_bounds_in_a_gguf(tmp_path, files, label):
    """load_vocab keeps the bytes as they are; the reference parser refuses them clearly
    (where llama.cpp throws "Index out of array bounds in precompiled charsmap!")."""
    layout = mut.GGUFLayout(files["ugm-gguf"])
    rec = layout.record("tokenizer.ggml.precompiled_charsmap")
    blob = files["ugm-gguf"][rec.type_at + 16:rec.end]
    bad = dict(mut.hostile_charsmaps(blob, random.Random(SEED)))[label]
    p = tmp_path / "m.gguf"
    p.write_bytes(_small_ugm_gguf(bad))
    vocab = load_vocab(p)
    assert vocab.precompiled_charsmap == bad
    with pytest.raises(TokparityError, match=r"precompiled_charsmap: .*(does not fit|outside|NUL)"):
        cm = CharsMap(vocab.precompiled_charsmap, f"{p}: precompiled_charsmap")
        for text in loaders.PROBE_TEXTS:
            data = text.encode()
            for start in range(len(data)):
                cm.longest_match(data, start)


# --- .model regressions (each was a traceback or a memory blow-up before) --------------------

def _spm_with(data: bytes, field: int, sub: int, new: mut.PBField) -> bytes:
    """``data`` with sub-field ``sub`` of the first top-level ``field`` replaced by (or set to) ``new``."""
    tree = mut.pb_parse(data)
    i = next(k for k, f in enumerate(tree) if f.field == field)
    j = next((k for k, g in enumerate(tree[i].value) if g.field == sub), None)
    if j is None:
        return mut.pb_serialize(mut._replaced(tree, (i,), [mut.PBField(field, 2, tree[i].value + [new])]))
    return mut.pb_serialize(mut._replaced(tree, (i, j), [new]))


@pytest.mark.parametrize("field, sub, new, message", [
    # bytes(10**9): a gigabyte of zeros for a 5-byte varint
    pytest.param(3, 2, mut.PBField(2, 0, 10**9), "NormalizerSpec field 2 is an integer where the schema says bytes",
                 id="charsmap-as-varint"),
    pytest.param(3, 1, mut.PBField(1, 0, 5), "NormalizerSpec field 1 is an integer", id="name-as-varint"),
    pytest.param(2, 3, mut.PBField(3, 2, b"x"), "TrainerSpec field 3 is bytes where the schema says an integer",
                 id="model-type-as-bytes"),
    pytest.param(2, 40, mut.PBField(40, 0, 2**63), "TrainerSpec field 40 is -9223372036854775808, outside int32",
                 id="unk-id-2**63"),
    pytest.param(1, 3, mut.PBField(3, 0, 2**40), "piece #0 has type 1099511627776, outside int32",
                 id="piece-type-2**40"),
])
def test_spm_model_wrong_wire_types(tmp_path, files, field, sub, new, message):
    p = tmp_path / "m.model"
    p.write_bytes(_spm_with(files["spm"], field, sub, new))
    outcome = check_loader(p)
    assert outcome.kind == CLEAR, outcome
    assert message in outcome.detail


def test_spm_model_normalizer_name_not_utf8_loads(tmp_path, files):
    p = tmp_path / "m.model"
    p.write_bytes(_spm_with(files["spm"], 3, 1, mut.PBField(1, 2, b"nmt_\xff")))
    assert load_vocab(p).extra["normalizer_name"] == "nmt_\ufffd"


# --- tokenizer.json regressions -----------------------------------------------------------------

BASE = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}


@pytest.mark.parametrize("changes, raw, message", [
    pytest.param({"normalizer": {"type": []}}, None, "normalizer step 0 has unknown type []", id="unhashable-stage-type"),
    pytest.param({"normalizer": {"type": "Replace", "pattern": "x", "content": "\u2581"}}, None,
                 "normalizer step 0 (Replace) pattern is 'x'", id="replace-pattern-string"),  # issue 17: refused
    pytest.param({"post_processor": {"type": "TemplateProcessing", "single": {"a": 1}}}, None,
                 "post_processor (TemplateProcessing) single is",
                 id="template-single-dict"),
    pytest.param({"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": []}}]}},
                 None, "post_processor (TemplateProcessing) single[0] is", id="template-id-list"),
    pytest.param({"post_processor": {"type": "Sequence", "processors": 5}}, None,
                 "post_processor (Sequence) processors is 5", id="sequence-of-int"),
    pytest.param({"model": {**BASE["model"], "merges": 5}}, None, "model.merges is a JSON int, expected a list",
                 id="merges-int"),
    pytest.param({"model": {"type": "Unigram", "vocab": [["a", 0]]}}, b'[["a", 1' + b"0" * 400 + b"]]",
                 "model.vocab[0] has a score too large for a float", id="unigram-score-1e400"),
    pytest.param({"model": {**BASE["model"], "vocab": {"a": 0}}}, b'{"a": ' + b"9" * 5000 + b"}",
                 "invalid JSON: Exceeds the limit (4300 digits)", id="id-5000-digits"),
    pytest.param({"model": {**BASE["model"], "vocab": {"a\ud800": 0}}}, None,
                 "token 0 'a\\ud800' holds a lone surrogate", id="lone-surrogate"),
    pytest.param({"added_tokens": [{"id": -1, "content": "x"}]}, None, "added_tokens entry 'x' has id -1",
                 id="negative-added-id"),
    pytest.param({"added_tokens": ["x\ny"]}, None, "malformed added_tokens entry 'x\\ny'", id="added-token-newline"),
])
def test_hf_json_hostile_values(tmp_path, changes, raw, message):
    doc = {**BASE, **changes}
    text = json.dumps(doc)
    if raw is not None:  # splice in what json.dumps cannot write
        vocab = json.dumps(doc["model"]["vocab"])
        text = text.replace(vocab, raw.decode())
    p = tmp_path / "tokenizer.json"
    p.write_text(text)
    if message is None:
        assert load_vocab(p).tokens[:3] == ["a", "b", "ab"]
    else:
        with pytest.raises(BadModelFile) as e:
            load_vocab(p)
        assert message in str(e.value)
        assert "\n" not in str(e.value)


# ---------------------------------------------------------------------------------------------
# The memory bound and the harness itself


def test_the_seed_files_load_within_the_bound(pool, files):
    names = {"gguf": "m.gguf", "ugm-gguf": "m.gguf", "bpe-gguf": "m.gguf", "spm": "m.model", "json": "tokenizer.json"}
    found = _run(pool, [mut.Mutant(f"{k}/original", data, names[k]) for k, data in files.items()])
    assert len(found[OK]) == len(files), found


def test_linear_worst_case_fits_the_bound(tmp_path):
    """300k one-character merges: the densest Python objects per file byte a GGUF can make
    (the probe decodes them all). It must load within FACTOR × size."""
    merges = [chr(0x100 + i % 5000) + " " + chr(0x100 + i // 5000) for i in range(300_000)]
    p = _gguf_file(tmp_path, gb.kv_string("tokenizer.ggml.model", "gpt2"),
                   gb.kv_strings("tokenizer.ggml.tokens", ["a"]), gb.kv_strings("tokenizer.ggml.merges", merges))
    assert check_loader(p).kind == OK


def test_classification():
    p = loaders.Path("/d/m.gguf")
    assert loaders.classify_error(BadModelFile(p, "truncated"), p).kind == CLEAR
    assert loaders.classify_error(BadModelFile(p, "two\nlines"), p).kind == BAD
    assert loaders.classify_error(BadModelFile("elsewhere.gguf", "x"), p).kind == BAD
    assert loaders.classify_error(BadModelFile(p, "x" * 1000), p).kind == BAD
    outcome = loaders.classify_error(KeyError("k"), p)
    assert outcome.kind == BAD and outcome.detail.startswith("KeyError: 'k'")


def test_timeout_kills_the_worker_and_the_next_check_runs(zoo):
    path = zoo("nomic-bert-moe").files["gguf"]
    with LoaderWorker(timeout=0.0) as worker:
        outcome = worker.check(path)
        assert (outcome.kind, outcome.detail) == (BAD, "timeout: no answer after 0 s")
        worker.timeout = 30.0
        assert worker.check(path).kind == OK


def test_fuzz_entry_point(tmp_path, capsys):
    status = loaders.main(["--seconds", "3", "--seed", str(SEED), "-o", str(tmp_path / "bad")])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "format" in out and "gguf" in out and "hf-json" in out and "spm-model" in out
    assert not (tmp_path / "bad").exists()
