"""The llama.cpp backend: llama.cpp's own test-tokenizer-0 check, notes, buffers, decode."""

from __future__ import annotations

import threading

import llama_cpp
import pytest

from tokparity.zoo import load_manifest

GOLDEN_MODELS = [name for name, m in load_manifest().models.items() if "golden_out" in m.files]

# llama.cpp's detokenizer applies Hugging Face's clean_up_tokenization_spaces for these
# vocabularies (llama_vocab's clean_spaces), so " ?" decodes as "?": no exact round trip promised.
CLEANS_SPACES = {"gemma-4", "llama-bpe", "gpt-2", "falcon", "starcoder", "refact", "mpt"}
NO_ROUND_TRIP = {"bert-bge"}  # WordPiece lower-cases and drops whitespace: decoding is lossy by design


def clean_up_tokenization(s: str) -> str:
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
                 (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        s = s.replace(a, b)
    return s


@pytest.mark.parametrize("model", [pytest.param(m, id=m) for m in GOLDEN_MODELS])
def test_reproduces_every_golden_id_list(backend, golden, model):
    """What llama.cpp's test-tokenizer-0 checks: every .out line, add_special off."""
    llama = backend("llama.cpp", model)
    cases = golden(model)
    wrong = [(c.index, c.text) for c in cases if llama.encode(c.text, False, False) != list(c.ids)]
    assert wrong == [] and len(cases) >= 46


@pytest.mark.parametrize("model", [pytest.param(m, id=m) for m in GOLDEN_MODELS if m not in NO_ROUND_TRIP])
def test_decode_round_trip(backend, golden, model):
    llama = backend("llama.cpp", model)
    expect = clean_up_tokenization if model in CLEANS_SPACES else (lambda s: s)
    wrong = [c.text for c in golden(model) if llama.decode(llama.encode(c.text)) != expect(c.text)]
    assert wrong == []


def test_add_special_adds_bos(backend):
    assert backend("llama.cpp", "llama-spm").encode("Hello world", add_special=True) == [1, 15043, 3186]


def test_parse_special(backend):
    llama = backend("llama.cpp", "llama-spm")
    assert llama.encode("<s>Hi", parse_special=True) == [1, 6324]
    assert llama.encode("<s>Hi", parse_special=False) == [529, 29879, 29958, 18567]


def test_double_bos_warning_is_a_note_of_that_case(backend):
    llama = backend("llama.cpp", "llama-spm")
    result = llama.encode_with_notes("<s>Hi", add_special=True, parse_special=True)
    assert result.ids == [1, 1, 6324]
    assert len(result.notes) == 1 and "final prompt starts with 2 BOS tokens" in result.notes[0]
    assert llama.encode_with_notes("Hi", add_special=True).notes == []


def test_token_buffer_grows(backend):
    llama = backend("llama.cpp", "llama-spm")
    ids = llama.encode(" Hello" * 5000)  # 5001 tokens, ten times the first buffer
    assert ids == [29871] + [15043] * 5000
    assert llama.encode(" Hello") == [29871, 15043]


def test_pieces_are_the_stored_token_text(backend):
    llama = backend("llama.cpp", "llama-spm")
    assert llama.pieces([15043, 3186, 13, 1]) == ["▁Hello", "▁world", "<0x0A>", "<s>"]
    assert llama.token_bytes([15043, 13]) == [b" Hello", b"\n"]


def test_pieces_longer_than_32_bytes(backend):
    """Token 58040 of Llama 3 is 128 spaces; llama-cpp-python's own helpers cut pieces at 32 bytes (#2362)."""
    llama = backend("llama.cpp", "llama-bpe")
    assert llama.token_bytes([58040]) == [b" " * 128]
    assert llama.decode([58040, 58040]) == " " * 256
    assert llama.pieces([58040]) == ["Ġ" * 128]


def test_out_of_range_id_is_refused_not_fatal(backend):
    llama = backend("llama.cpp", "llama-spm")
    with pytest.raises(ValueError, match=r"token id 32000 is outside the vocabulary \(0\.\.31999\)"):
        llama.decode([15043, 32000])
    assert llama.decode([15043]) == "Hello"


def test_version(backend):
    assert backend("llama.cpp", "llama-spm").version == llama_cpp.__version__ == "0.3.36"


def test_the_model_is_freed_once_on_a_thread_of_its_own(zoo, monkeypatch):
    """close frees the model on a thread of its own: the run goes on meanwhile, and a signal
    handled on the main thread cannot cut the free. Closing again, or __del__, never frees it
    twice (a segfault seen when a run was stopped with SIGTERM while the model was freed)."""
    from tokparity.backends.llamacpp import LlamaCppBackend
    from tokparity.zoo import resolve_model

    zoo("llama-spm")
    backend = LlamaCppBackend(resolve_model("llama-spm"))
    freed: list[threading.Thread] = []
    done = threading.Event()
    real_free = llama_cpp.llama_model_free

    def free(model):
        real_free(model)
        freed.append(threading.current_thread())
        done.set()

    monkeypatch.setattr(llama_cpp, "llama_model_free", free)
    backend.close()
    backend.close()
    backend.__del__()
    assert done.wait(60)
    assert len(freed) == 1 and freed[0] is not threading.main_thread()
