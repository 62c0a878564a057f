"""A native backend in a child process: a crash on one case is a record, not the end of the run."""

from __future__ import annotations

import gguf_builder as gb
import pytest

from tokparity.backends.isolated import IsolatedBackend
from tokparity.backends.llamacpp import LlamaCppBackend
from tokparity.backends.registry import make_backend
from tokparity.backends.runner import run_cases
from tokparity.errors import BadModelFile, CaseFailure, TokparityError
from tokparity.zoo import resolve_model


@pytest.fixture
def no_byte_tokens_gguf(tmp_path):
    """A valid 6-token SPM vocabulary without <0xNN> byte tokens: llama.cpp's byte fallback
    looks "<0x62>" up with .at(), the exception crosses the C API and the process aborts."""
    path = tmp_path / "tiny.gguf"
    path.write_bytes(gb.tiny_spm_gguf())
    return resolve_model(str(path))


def test_llamacpp_abort_is_a_crash_record_and_the_run_goes_on(no_byte_tokens_gguf):
    llama = make_backend("llama.cpp", no_byte_tokens_gguf)  # a local file: isolated by default
    try:
        assert isinstance(llama, IsolatedBackend)
        results = run_cases(llama, ["a a", "b", "a", "a a a"])
        assert [r.status for r in results] == ["ok", "crash", "ok", "ok"]
        assert [r.ids for r in results] == [[5, 5], [], [5], [5, 5, 5]]
        assert results[1].detail.startswith("llama.cpp (child process): killed by SIGABRT on this case; stderr: ")
        assert "std::out_of_range" in results[1].detail
        assert llama.restarts == 1
    finally:
        llama.close()


def test_unloadable_file_is_an_error_when_the_backend_is_made(tmp_path):
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"GGUF" + b"\x03\0\0\0" + b"\xff" * 20)
    model = resolve_model(str(path))
    with pytest.raises(TokparityError, match=r"^backend 'llama.cpp' on model bad: .*bad\.gguf: llama.cpp could not "
                                             r"load it: gguf_init_from_reader: number of tensors is -1"):
        make_backend("llama.cpp", model)
    with pytest.raises(BadModelFile, match=r"llama.cpp could not load it: gguf_init_from_reader"):
        LlamaCppBackend(model)


def test_isolated_equals_in_process(backend, golden):
    child, here = backend("llama.cpp", "llama-spm", isolate=True), backend("llama.cpp", "llama-spm")
    texts = [c.text for c in golden("llama-spm")]
    assert [child.encode(t) for t in texts] == [here.encode(t) for t in texts]
    assert child.version == here.version == "0.3.36"
    assert child.pieces([15043, 13]) == ["▁Hello", "<0x0A>"]
    assert child.decode([15043, 3186]) == "Hello world"
    assert child.supports("normalize") is False


def test_notes_cross_the_process_boundary(backend):
    child = backend("llama.cpp", "llama-spm", isolate=True)
    result = child.encode_with_notes("<s>Hi", add_special=True, parse_special=True)
    assert result.ids == [1, 1, 6324] and "2 BOS tokens" in result.notes[0]


def test_isolated_hf_exposes_its_stages(backend):
    child = backend("hf", "llama-bpe", isolate=True)
    assert child.supports("pre_tokenize") and child.supports("normalize")
    assert child.pre_tokenize("Hello  world") == ["Hello", "Ġ", "Ġworld"]
    assert child.normalize("Hello  world") == "Hello  world"


def test_an_error_in_the_child_is_an_error_record(backend):
    child = backend("llama.cpp", "llama-spm", isolate=True)
    with pytest.raises(CaseFailure, match=r"ValueError: token id 99999 is outside the vocabulary"):
        child.decode([99999])
    assert child.encode("Hi") == [6324]


LAZY_PROGRAM = r'''
import json, sys, time
print(json.dumps({"id": 0, "ready": True, "loads_on_first_use": ["chat", "hang"]}), flush=True)
seen = set()
for line in sys.stdin:
    req = json.loads(line)
    op = req["op"]
    if op == "hang":
        time.sleep(60)
    if op not in seen:
        seen.add(op)
        time.sleep(1.0)  # what the op loads when first asked
    print(json.dumps({"id": req["id"], "text": op}), flush=True)
'''


def test_an_op_that_loads_on_first_use_gets_the_start_grace_once_per_start(tmp_path):
    """An isolated hf backend loads transformers on the first chat: on a busy machine that load
    took longer than a case's timeout, and every chat after a restart timed out again."""
    import sys

    from tokparity.backends.engine_process import EngineProcess
    from tokparity.backends.requests import body
    from tokparity.errors import BackendTimeout

    program = tmp_path / "lazy.py"
    program.write_text(LAZY_PROGRAM)
    engine = EngineProcess([sys.executable, str(program)], "lazy", startup_timeout=3.0, hello=True)
    try:
        engine.start()
        assert engine.request(body({"op": "chat"}), 0.4)[0]["text"] == "chat"  # 1 s: within the grace
        assert engine.request(body({"op": "chat"}), 0.4)[0]["text"] == "chat"
        with pytest.raises(BackendTimeout, match=r"no answer within 0.4 s; killed"):  # not declared: no grace
            engine.request(body({"op": "encode"}), 0.4)
        # After the restart, chat loads again: its grace is now twice what it took, and a second.
        assert engine.request(body({"op": "chat"}), 0.4)[0]["text"] == "chat"
        with pytest.raises(BackendTimeout, match=r"no answer within 0.4 s \(\+3 s for its first 'hang'\)"):
            engine.request(body({"op": "hang"}), 0.4)
        with pytest.raises(BackendTimeout, match=r"no answer within 0.4 s; killed"):  # it hangs: no grace again
            engine.request(body({"op": "hang"}), 0.4)
    finally:
        engine.close()


def test_an_isolated_hf_backend_says_chat_loads_on_first_use(zoo):
    hf = make_backend("hf", zoo("qwen3"), isolate=True)
    try:
        assert hf.engine.last_hello["loads_on_first_use"] == ["chat"]
    finally:
        hf.close()
