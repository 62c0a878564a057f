"""Hostile tokenizer files and arguments (issue 17, family "models"): a tokenizer.json whose regex
backtracks for ever, whose normalizer grows text beyond any memory, or that tokenizers panics on;
a --known file that hangs or is not one; an empty GGUF; a bad escape; a GGUF token type no one
defines; a full disk under convert; a compare that compares nothing. Each ends in a recorded
failure for its case or in one line naming the file, exit 2, within a time limit."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import gguf_builder as gb
import pytest

from tokparity.cli import main
from tokparity.diff.classify import CLASSES

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ROOT / "tests" / "engines"
BACKTRACKS = "(a|a)+$"  # on "aaa…a!": 2**30 ways to fail before the "!"
HOSTILE_TEXT = "a" * 30 + "!"


def tokparity(*args: str, timeout: float = 60, fsize: int | None = None, cwd: Path | None = None,
              **environ: str):
    """The real CLI in a child (address space capped, so a blow-up fails fast instead of
    swapping the machine); ``fsize`` caps the size of any file it writes (a full disk)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ENGINES)]), "RUST_BACKTRACE": "0", **environ}

    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead of a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, preexec_fn=limits, cwd=cwd)


def one_line_error(result, *words: str) -> str:
    """The run ended with exit 2 and one `tokparity: error:` line holding ``words``."""
    assert result.returncode == 2, (result.returncode, result.stdout[-500:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("tokparity: error:")]
    assert len(errors) == 1, result.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


@pytest.fixture(scope="module")
def llama2_json(zoo) -> dict:
    """lenml-llama2's tokenizer.json (SentencePiece-style BPE, a Replace normalizer), to edit."""
    return json.loads(zoo("lenml-llama2").files["tokenizer_json"].read_text("utf-8"))


@pytest.fixture
def edited(tmp_path, llama2_json):
    """``edited("name", pre_tokenizer=…, normalizer=…)`` -> a copy of the tokenizer.json so changed."""
    def make(name: str, **stages) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        path = folder / "tokenizer.json"
        path.write_text(json.dumps({**llama2_json, **stages}), "utf-8")
        return path
    return make


def _split(pattern) -> dict:
    return {"type": "Split", "pattern": pattern, "behavior": "Isolated", "invert": False}


# ---------------------------------------------------------------------------------------------
# 1. A Split regex with catastrophic backtracking


def test_a_backtracking_split_regex_is_a_timeout_for_ref_and_a_crash_for_hf_and_the_run_goes_on(edited, tmp_path):
    path = edited("backtracks", pre_tokenizer=_split({"Regex": BACKTRACKS}))
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "hostile", "text": HOSTILE_TEXT}) + "\n"
                      + json.dumps({"id": "plain", "text": "Hello world"}) + "\n", "utf-8")
    start = time.monotonic()
    run = tokparity("compare", str(path), "-c", str(corpus), "-b", "ref", "-b", "hf", "--oracle", "ref",
                    "-o", str(tmp_path / "out"), "-q", "--no-diagnose")
    assert time.monotonic() - start < 40
    assert run.returncode == 1, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    records = [json.loads(line) for line in (tmp_path / "out" / "cases.jsonl").read_text("utf-8").splitlines()[1:]]
    by_id = {r["case_id"]: r for r in records}
    assert set(by_id) == {"hostile", "plain"}  # the run went on past the hostile case
    assert by_id["plain"]["verdicts"] == {"hf": "agree"}
    (mismatch,) = by_id["hostile"]["mismatches"]
    assert mismatch["cls"] == "timeout"  # the oracle, ref, ran out of time on the regex; hf's panic did not end it
    assert "the oracle ref failed" in mismatch["evidence"] and BACKTRACKS in mismatch["evidence"]


def test_encode_names_the_regex_that_ran_out_of_time_and_the_panic(edited):
    path = edited("backtracks", pre_tokenizer=_split({"Regex": BACKTRACKS}))
    run = tokparity("encode", str(path), HOSTILE_TEXT, "-b", "ref", "-b", "hf", timeout=40, RUST_BACKTRACE="1")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert "timeout: ref: pre_tokenizer Split regex '(a|a)+$' ran out of time" in run.stdout
    assert "crash: tokenizers panicked in encode" in run.stdout
    assert "2 failed: ref (timeout), hf (crash)" in run.stdout
    # Rust's panic hook writes the panic, and with RUST_BACKTRACE a backtrace, to stderr before
    # Python sees it; the table already says it, so stderr stays clean
    assert "panicked" not in run.stderr and "stack backtrace" not in run.stderr, run.stderr[-2000:]


# ---------------------------------------------------------------------------------------------
# 2. A normalizer that grows the text beyond any memory


@pytest.mark.parametrize("backend", ["ref", "hf"])
def test_a_replace_chain_that_triples_the_text_22_times_is_refused_at_load(edited, backend):
    triple = {"type": "Replace", "pattern": {"String": "a"}, "content": "aaa"}
    path = edited("grows", normalizer={"type": "Sequence", "normalizers": [triple] * 22})
    assert path.stat().st_size < 3_000_000
    start = time.monotonic()
    run = tokparity("encode", str(path), "banana", "-b", backend, timeout=60)
    one_line_error(run, str(path), "normalizer can grow text 31381059609-fold", "refusing")
    assert time.monotonic() - start < 20


def test_the_reference_stops_any_normalizer_chain_that_grows_a_text_over_64_fold():
    """Chains the load-time bound does not count (here built by hand) are stopped per text."""
    from tokparity.components import normalizers
    from tokparity.reference.hf import Normalizer

    triple = {"type": "Replace", "pattern": {"String": "a"}, "content": "aaa"}
    normalizer = Normalizer(normalizers.parse(Path("tokenizer.json"), "normalizer",
                                              {"type": "Sequence", "normalizers": [triple] * 12}))
    with pytest.raises(ValueError, match="over 64 times the input"):
        normalizer("a" * 100)


def test_an_ordinary_replace_chain_still_loads(edited):
    steps = [{"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
             {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
             {"type": "Replace", "pattern": {"String": "\t"}, "content": "    "}]
    path = edited("ordinary", normalizer={"type": "Sequence", "normalizers": steps})
    assert main(["encode", str(path), "a\tb", "-b", "ref", "-b", "hf"]) == 0


# ---------------------------------------------------------------------------------------------
# 4. Steps tokenizers panics on or no implementation can build: one line naming the file


# name -> (stages, what ref's line says, what hf's line says: tokenizers' own words where it refuses)
BROKEN_STAGES = {
    "replace-empty-pattern": ({"normalizer": {"type": "Replace", "pattern": {"String": ""}, "content": "x"}},
                              "normalizer step 0 (Replace) has an empty pattern", "has an empty pattern"),
    "split-regex-does-not-compile": ({"pre_tokenizer": _split({"Regex": "(a"})},
                                     "pre_tokenizer Split regex '(a' does not compile", "unmatched parenthesis"),
    "split-without-pattern": ({"pre_tokenizer": {"type": "Split", "behavior": "Isolated", "invert": False}},
                              "pre_tokenizer step 0 (Split) has no 'pattern'", "pattern"),
    "split-string-pattern": ({"pre_tokenizer": _split("a")}, "pre_tokenizer step 0 (Split) pattern is 'a'",
                             "pattern is 'a'"),
    "replace-without-pattern": ({"normalizer": {"type": "Replace", "content": "x"}},
                                "normalizer step 0 (Replace) has no 'pattern'", "pattern"),
    "replace-string-pattern": ({"normalizer": {"type": "Replace", "pattern": "a", "content": "x"}},
                               "normalizer step 0 (Replace) pattern is 'a'", "pattern is 'a'"),
}


@pytest.mark.parametrize("backend", ["ref", "hf"])
@pytest.mark.parametrize("name", list(BROKEN_STAGES))
def test_a_broken_step_is_one_line_naming_the_file(edited, capsys, name, backend):
    stages, ref_words, hf_words = BROKEN_STAGES[name]
    words = ref_words if backend == "ref" else hf_words
    path = edited(name, **stages)
    assert main(["encode", str(path), "Hello world", "-b", backend]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith(f"tokparity: error: {path}: ") and words in err, err


def test_an_empty_replace_pattern_would_make_tokenizers_panic(llama2_json):
    """Why it is refused: tokenizers panics on it once a byte-level pre-tokenizer follows."""
    tokenizers = pytest.importorskip("tokenizers")
    config = {**llama2_json, "normalizer": {"type": "Replace", "pattern": {"String": ""}, "content": "x"},
              "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                "use_regex": True}}
    tok = tokenizers.Tokenizer.from_str(json.dumps(config))
    with pytest.raises(BaseException) as caught:
        tok.encode("abc")
    assert type(caught.value).__name__ == "PanicException"


# ---------------------------------------------------------------------------------------------
# 3. --known files


KNOWN_ENTRY = """[[divergence]]
id = "slow"
models = ["*"]
backends = ["*"]
classes = {classes}
text = '{text}'
reason = "r"
upstream = "u"
"""
EVERY_CLASS = json.dumps(list(CLASSES))  # so the text regex is what decides


def test_a_backtracking_regex_in_a_known_file_is_one_line_naming_file_and_entry(edited, tmp_path):
    path = edited("plain")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "hostile", "text": HOSTILE_TEXT}) + "\n", "utf-8")
    known = tmp_path / "slow.toml"
    known.write_text(KNOWN_ENTRY.format(text=BACKTRACKS, classes=EVERY_CLASS), "utf-8")
    start = time.monotonic()
    # a py: engine that answers UTF-8 bytes: every case mismatches, so the entry is tried on it
    run = tokparity("compare", str(path), "-c", str(corpus), "-b", "ref", "-b", "py:flaky_py:encode",
                    "--known", str(known), "-o", str(tmp_path / "out"), "-q", "--no-diagnose", timeout=60)
    one_line_error(run, str(known), "divergence 'slow'", "text regex", "case 'hostile'")
    assert time.monotonic() - start < 30


def _known_folder(tmp_path: Path) -> Path:
    (tmp_path / "k").mkdir()
    return tmp_path / "k"


def _known_binary(tmp_path: Path) -> Path:
    (tmp_path / "k.toml").write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe" * 20)
    return tmp_path / "k.toml"


def _known_models_5(tmp_path: Path) -> Path:
    (tmp_path / "k.toml").write_text(KNOWN_ENTRY.format(text="x", classes=EVERY_CLASS).replace('models = ["*"]', "models = 5"), "utf-8")
    return tmp_path / "k.toml"


def _known_divergence_5(tmp_path: Path) -> Path:
    (tmp_path / "k.toml").write_text("divergence = 5\n", "utf-8")
    return tmp_path / "k.toml"


def _known_models_5_at_the_top(tmp_path: Path) -> Path:
    (tmp_path / "k.toml").write_text('models = 5\n', "utf-8")
    return tmp_path / "k.toml"


def _known_entry_a_string(tmp_path: Path) -> Path:
    (tmp_path / "k.toml").write_text('divergence = ["x"]\n', "utf-8")
    return tmp_path / "k.toml"


@pytest.mark.parametrize("make, words", [
    pytest.param(_known_folder, "is a folder", id="folder"),
    pytest.param(_known_binary, "not UTF-8", id="binary"),
    pytest.param(_known_models_5, "models must be an array of strings", id="models-5"),
    pytest.param(_known_divergence_5, "'divergence' must be a list of tables", id="divergence-5"),
    pytest.param(_known_entry_a_string, "divergence #1 is a string", id="entry-a-string"),
    pytest.param(_known_models_5_at_the_top, "unknown top-level key 'models'", id="models-5-at-the-top"),
])
def test_a_known_path_that_is_not_a_known_file_is_one_line(edited, tmp_path, capsys, make, words):
    model = edited("plain")
    known = make(tmp_path)
    assert main(["compare", str(model), "-c", "edge", "-b", "ref", "--known", str(known),
                 "-o", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith(f"tokparity: error: {known}: ") and words in err, err


def test_an_unreadable_known_file_is_one_line(tmp_path, monkeypatch):
    from tokparity.errors import TokparityError
    from tokparity.run.known import load_known

    known = tmp_path / "k.toml"
    known.write_text("", "utf-8")

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_text", denied)  # root reads a chmod-000 file, so say it is unreadable
    with pytest.raises(TokparityError, match=r"k\.toml: cannot read this known-divergences file \(Permission denied"):
        load_known([known], builtin=False)


# ---------------------------------------------------------------------------------------------
# 5. encode: an escape past U+10FFFF, an empty GGUF


@pytest.mark.parametrize("escape, words", [
    pytest.param(r"a\U00110000", r"\U00110000 is not a Unicode code point", id="past-10FFFF"),
    pytest.param(r"a\ud800", r"\ud800 is a lone surrogate", id="lone-surrogate"),
])
def test_encode_a_bad_escape_is_one_line(capsys, escape, words):
    assert main(["encode", "llama-spm", "-e", escape, "-b", "ref"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and words in err, err


@pytest.fixture
def empty_gguf(tmp_path) -> Path:
    path = tmp_path / "empty.gguf"
    path.write_bytes(gb.gguf(gb.kv_string("general.architecture", "llama"), gb.kv_string("tokenizer.ggml.model", "llama"),
                             gb.kv_strings("tokenizer.ggml.tokens", []), gb.kv_float32s("tokenizer.ggml.scores", []),
                             gb.kv_int32s("tokenizer.ggml.token_type", [])))
    return path


@pytest.mark.parametrize("backends", [
    pytest.param([], id="default-backends"),
    pytest.param(["-b", "ref"], id="ref"),
    pytest.param(["-b", "llama.cpp"], id="llama.cpp"),
])
def test_encode_on_an_empty_gguf_is_exit_2(empty_gguf, backends):
    run = tokparity("encode", str(empty_gguf), "hello", *backends)
    one_line_error(run, "empty.gguf", "no tokens")
    assert "✅" not in run.stdout and "answered" not in run.stdout


# ---------------------------------------------------------------------------------------------
# 6. convert: a token type no one defines, a full disk


def _spm_gguf(types: list[int]) -> bytes:
    return gb.gguf(gb.kv_string("general.architecture", "llama"), gb.kv_string("tokenizer.ggml.model", "llama"),
                   gb.kv_strings("tokenizer.ggml.tokens", ["<unk>", "<s>", "</s>", "▁", "a", "▁a"]),
                   gb.kv_float32s("tokenizer.ggml.scores", [0.0, 0.0, 0.0, -1.0, -2.0, -0.5]),
                   gb.kv_int32s("tokenizer.ggml.token_type", types),
                   gb.kv_u32("tokenizer.ggml.bos_token_id", 1), gb.kv_u32("tokenizer.ggml.eos_token_id", 2))


@pytest.mark.parametrize("types, token", [
    pytest.param([2, 99, 3, 1, 1, 1], "token 1 '<s>'", id="bos-99"),
    pytest.param([2, 3, 3, 1, 99, 1], "token 4 'a'", id="normal-99"),
])
def test_convert_a_token_type_of_99_is_one_line_and_writes_nothing(tmp_path, capsys, types, token):
    src = tmp_path / "t99.gguf"
    src.write_bytes(_spm_gguf(types))
    out = tmp_path / "out.model"
    assert main(["convert", str(src), "--to", "spm", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tokparity: error: {src}: {token} has tokenizer.ggml.token_type 99"), err
    assert list(tmp_path.iterdir()) == [src]


@pytest.mark.parametrize("source, to", [
    pytest.param("llama-spm", "spm", id="gguf-to-spm"),
    pytest.param("botchan-bpe", "gguf", id="spm-to-gguf"),
    pytest.param("botchan-bpe", "hf", id="spm-to-hf"),
])
def test_convert_on_a_full_disk_leaves_no_file(zoo, tmp_path, source, to):
    model = zoo(source)
    src = model.files["gguf" if to == "spm" else "spm_model"]
    out = tmp_path / f"out.{to}"
    run = tokparity("convert", str(src), "--to", to, "-o", str(out), fsize=4096, cwd=tmp_path)
    one_line_error(run, str(out), "cannot write it", "nothing written")
    assert list(tmp_path.iterdir()) == []  # neither a 0-byte or cut file nor a temporary one


def test_convert_on_a_full_disk_keeps_the_file_it_would_replace(zoo, tmp_path):
    out = tmp_path / "out.model"
    out.write_bytes(b"the previous conversion")
    run = tokparity("convert", str(zoo("llama-spm").files["gguf"]), "--to", "spm", "-o", str(out), fsize=4096)
    one_line_error(run, "cannot write it")
    assert out.read_bytes() == b"the previous conversion"
    assert list(tmp_path.iterdir()) == [out]


# ---------------------------------------------------------------------------------------------
# 7. compare with nothing to compare


def test_compare_with_only_the_oracle_says_nothing_was_compared(edited, tmp_path, capsys):
    model = edited("plain")
    assert main(["compare", str(model), "-c", "edge", "-b", "ref", "--oracle", "ref",
                 "-o", str(tmp_path / "out"), "-q"]) == 2
    captured = capsys.readouterr()
    assert "✅" not in captured.out
    err = captured.err.strip()
    assert err.count("\n") == 0 and "nothing was compared" in err, err
