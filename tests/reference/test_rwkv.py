"""RWKV World: the vocabulary loader, the reference against the rwkv package and llama.cpp, the GGUF
converter, and a hostile vocabulary file (nothing from it is ever run)."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from tokparity.corpus import load_corpus
from tokparity.errors import BadModelFile
from tokparity.reference import RefTokenizer
from tokparity.reference.rwkv import ByteTrie
from tokparity.vocab import detect_format, load_vocab
from tokparity.vocab.model import TokenType
from tokparity.vocab.rwkv_vocab import escape_llama_rwkv, parse_line, read_rwkv_vocab, unescape_llama_rwkv

WORKTREE = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(WORKTREE)}


def _cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True, env=ENV,
                          cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def rwkv_world(zoo):
    return zoo("rwkv-world")


@lru_cache(maxsize=1)
def _package_tokenizer(path: str):
    from rwkv.rwkv_tokenizer import TRIE_TOKENIZER
    return TRIE_TOKENIZER(path)


def _corpus_texts() -> list[str]:
    return [c.text for name in ("edge", "multilingual", "emoji", "llama.cpp-tests") for c in load_corpus(name)]


# --- the loader ------------------------------------------------------------------------------


def test_the_vocabulary_loads_with_the_file_ids(rwkv_world):
    vocab = load_vocab(rwkv_world.files["rwkv_vocab"])
    assert (vocab.algorithm, vocab.size, vocab.source_format) == ("rwkv", 65530, "rwkv-vocab")
    assert vocab.tokens[:3] == ["<s>", "\x00", "\x01"]
    assert vocab.type_of(0) == TokenType.CONTROL and vocab.type_of(1) == TokenType.NORMAL
    assert vocab.tokens[10250] == "一" and vocab.tokens[261] == "\n\n"
    # A token that is not UTF-8 keeps its bytes (surrogate escapes), as every Vocab does.
    raw = [t.encode("utf-8", "surrogateescape") for t in vocab.tokens[1:]]
    assert raw == read_rwkv_vocab(rwkv_world.files["rwkv_vocab"])
    assert any(b"\xe4\xb8" == t for t in raw)


@pytest.mark.parametrize("line, words", [
    pytest.param("7 __import__('os').getcwd() 1\n", ["line 7", "not a Python str or bytes literal"], id="call"),
    pytest.param("7 open 1\n", ["line 7", "not a Python str or bytes literal"], id="name"),
    pytest.param("7 f'{1}' 1\n", ["line 7", "not a Python str or bytes literal"], id="f-string"),
    pytest.param("7 123 3\n", ["line 7", "a int literal"], id="number"),
    pytest.param("7 'ab' 3\n", ["line 7", "2 bytes but the line says 3"], id="length"),
    pytest.param("7'a'1\n", ["line 7", "expected 'ID TOKEN LENGTH'"], id="no-spaces"),
    pytest.param("x 'a' 1\n", ["line 7", "must be integers"], id="bad-id"),
    pytest.param("7 '\\ud800' 3\n", ["line 7", "lone surrogate"], id="surrogate"),
])
def test_a_line_that_is_not_a_literal_token_is_refused(line, words):
    with pytest.raises(BadModelFile) as e:
        parse_line(line, 7, "v.txt")
    assert all(w in str(e.value) for w in words) and "\n" not in str(e.value)


def test_a_valid_line_reads_as_the_package_reads_it():
    assert parse_line("33 '@' 1\n", 1, "v.txt") == (33, b"@")
    assert parse_line("10250 b'\\xe4\\xb8' 2\n", 1, "v.txt") == (10250, b"\xe4\xb8")
    assert parse_line("12 ' ' 1\n", 1, "v.txt") == (12, b" ")  # the token itself is a space


def test_ids_must_count_up_from_one(tmp_path):
    path = tmp_path / "rwkv_vocab_gap.txt"
    path.write_text("1 'a' 1\n3 'b' 1\n", "utf-8")
    with pytest.raises(BadModelFile, match="line 2: id 3, expected 2"):
        read_rwkv_vocab(path)


def _hostile_vocab(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "PWNED"
    path = tmp_path / "rwkv_vocab_hostile.txt"
    path.write_text(f"1 'a' 1\n2 'b' 1\n3 __import__('os').system('touch {marker}') 1\n", "utf-8")
    return path, marker


@pytest.mark.parametrize("args", [
    pytest.param(["inspect", "{path}"], id="inspect"),
    pytest.param(["encode", "{path}", "ab", "-b", "rwkv"], id="rwkv-backend"),
    pytest.param(["compare", "{path}", "-c", "edge", "-b", "ref", "-o", "{out}", "-q"], id="compare"),
])
def test_a_hostile_vocabulary_is_refused_and_nothing_runs(tmp_path, args):
    path, marker = _hostile_vocab(tmp_path)
    argv = [a.format(path=path, out=tmp_path / "out") for a in args]
    proc = _cli(*argv, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "rwkv_vocab_hostile.txt: line 3: the token is not a Python str or bytes literal" in lines[0]
    assert not marker.exists()


# --- the reference ---------------------------------------------------------------------------


def test_worked_example_longest_match_over_bytes():
    trie = ByteTrie({b"a": 1, b"b": 2, b"ab": 3, b"abc": 4, b"c": 5})
    assert trie.split(b"abab") == [3, 3]
    assert trie.split(b"abcb") == [4, 2]
    assert trie.split(b"abc" + b"c") == [4, 5]


@pytest.mark.parametrize("text, ids", [
    pytest.param("Hello world", [33155, 40213], id="english"),
    pytest.param("你好世界 🦙", [10464, 11685, 10267, 14610, 33, 3319, 167, 154], id="cjk-emoji"),
    pytest.param("<s> [PAD65530]", [61, 116, 63, 326, 6404, 685, 673, 49, 94], id="special-lookalikes"),
    pytest.param("\n\n", [261], id="double-newline"),
    pytest.param(" " * 300, [65529, 65529, 65487], id="300-spaces"),
])
def test_reference_ids(rwkv_world, text, ids):
    ref = RefTokenizer(load_vocab(rwkv_world.files["rwkv_vocab"]))
    assert ref.encode(text) == ids
    assert _package_tokenizer(str(rwkv_world.files["rwkv_vocab"])).encode(text) == ids
    assert ref.decode(ids) == text


def test_reference_equals_the_rwkv_package_on_the_corpora(rwkv_world):
    path = rwkv_world.files["rwkv_vocab"]
    ref, package = RefTokenizer(load_vocab(path)), _package_tokenizer(str(path))
    texts = _corpus_texts()
    assert len(texts) > 3000
    differ = [t for t in texts if ref.encode(t) != package.encode(t)]
    assert differ == []


# --- llama.cpp and the converted GGUF ----------------------------------------------------------


def test_the_gguf_is_written_as_llama_cpps_converter_writes_rwkv_world(rwkv_world):
    from tokparity.vocab.gguf_reader import GGUFMetadata

    gguf_path = rwkv_world.files["gguf"]
    assert detect_format(gguf_path) == "gguf" and "gguf" in rwkv_world.derived
    meta = GGUFMetadata(gguf_path)
    assert (meta.get("general.architecture"), meta.get("tokenizer.ggml.model")) == ("rwkv7", "rwkv")
    vocab = load_vocab(gguf_path)
    assert (vocab.algorithm, vocab.size) == ("rwkv", 65536)
    assert vocab.tokens[0] == "<s>" and vocab.tokens[10250] == "\\xe4\\xb8\\x80" and vocab.tokens[65535] == "[PAD65535]"
    assert vocab.special_ids == {"bos": 0, "eos": 0, "eot": 261}
    original = read_rwkv_vocab(rwkv_world.files["rwkv_vocab"])
    assert [unescape_llama_rwkv(t.encode()) for t in vocab.tokens[1:65530]] == original


@pytest.mark.parametrize("token", [b"\xe4\xb8\x80", b"'", b"'\"", b"\\", b"\t\n\r", b"\x00\x7f\xff", b"a b"])
def test_escape_and_unescape_round_trip(token):
    assert unescape_llama_rwkv(escape_llama_rwkv(token).encode()) == token


def test_reference_on_the_gguf_equals_llama_cpp(rwkv_world):
    """On the GGUF the reference is llama.cpp's RWKV tokenizer: '<s>' and '[PAD…]' are one token each."""
    from tokparity.backends.llamacpp import LlamaCppBackend

    ref = RefTokenizer(load_vocab(rwkv_world.files["gguf"]))
    llama = LlamaCppBackend(rwkv_world)
    try:
        assert ref.encode("<s>[PAD65531]") == llama.encode("<s>[PAD65531]") == [0, 65531]
        # ...but only where the longest match says so: " [" is a token, so " [PAD65531]" is not one.
        assert ref.encode("a [PAD65531]") == llama.encode("a [PAD65531]") == [98, 326, 6404, 685, 673, 50, 94]
        texts = _corpus_texts()
        differ = [t for t in texts if ref.encode(t) != llama.encode(t)]
        assert differ == []
        assert ref.decode([0, 10250, 65531]) == llama.decode([0, 10250, 65531]) == "<s>一[PAD65531]"
    finally:
        llama.close()
