"""llama.cpp made on a thread while the other backends load (tokparity/backends/beside.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tokparity.backends.beside import MadeBeside
from tokparity.backends.llamacpp import LlamaCppBackend
from tokparity.backends.registry import loads_beside
from tokparity.errors import TokparityError
from tokparity.zoo import resolve_model


def test_a_backend_made_beside_answers_as_one_made_here(zoo):
    zoo("llama-bpe")
    model = resolve_model("llama-bpe")
    beside = MadeBeside(lambda: LlamaCppBackend(model), "llama.cpp")
    here = LlamaCppBackend(model)
    made = beside.take()
    try:
        text = "Hello world, 1234 naïve 😀"
        assert made.encode(text) == here.encode(text) != []
    finally:
        made.close()
        here.close()


def test_its_error_is_raised_where_it_is_taken(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 60)
    model = resolve_model(str(bad))
    beside = MadeBeside(lambda: LlamaCppBackend(model), "llama.cpp")
    with pytest.raises(TokparityError):
        beside.take()


def test_one_dropped_before_it_is_made_is_waited_for_and_closed(zoo):
    zoo("llama-spm")
    model = resolve_model("llama-spm")
    go, made = threading.Event(), []

    def make():
        assert go.wait(60)
        made.append(LlamaCppBackend(model))
        return made[0]

    beside = MadeBeside(make, "llama.cpp")
    threading.Timer(0.5, go.set).start()
    beside.drop()  # (before it is made: drop waits for the load, as a load on this thread would)
    assert not beside.is_alive()
    assert made and made[0]._model is None  # closed: its model freed


def test_only_a_backend_in_this_process_is_made_beside(zoo, tmp_path):
    """A child process's death signal follows the thread that started it: a backend that runs in a
    child is never made on a thread that ends."""
    zoo("llama-spm")
    pinned = resolve_model("llama-spm")
    assert loads_beside("llama.cpp", pinned)
    assert loads_beside("mine=llama.cpp", pinned)
    assert not loads_beside("llama.cpp", pinned, isolate=True)  # a chat run
    assert not loads_beside("ref", pinned)
    copy = tmp_path / "copy.gguf"
    copy.write_bytes(Path(pinned.files["gguf"]).read_bytes())
    assert not loads_beside("llama.cpp", resolve_model(str(copy)))  # a user's file: "auto" isolates it
