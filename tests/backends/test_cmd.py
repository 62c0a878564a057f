"""cmd: engines: the JSON-lines protocol, and an engine that crashes, hangs, errs and chatters."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tokparity.backends.cmd import CmdBackend, expand_command
from tokparity.backends.registry import make_backend
from tokparity.backends.runner import run_cases
from tokparity.errors import BackendCrash, BackendTimeout, EngineDidNotStart, TokparityError
from tokparity.zoo import ModelFiles

ENGINES = Path(__file__).resolve().parents[1] / "engines"  # test engines
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "engines"  # engines for users

FLAKY = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(ENGINES / 'flaky_engine.py'))}"


@pytest.fixture
def flaky(zoo):
    engine = make_backend(FLAKY, zoo("llama-spm"), timeout=1.0)
    yield engine
    engine.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_one_crash_one_timeout_and_the_run_goes_on(flaky):
    results = run_cases(flaky, ["a", "SEGV", "b", "HANG", "c"])
    assert [r.status for r in results] == ["ok", "crash", "ok", "timeout", "ok"]
    assert [r.ids for r in results] == [[97], [], [98], [], [99]]
    assert results[1].detail.endswith("killed by SIGSEGV on this case; stderr: flaky_engine: about to segfault")
    assert "no answer within 1 s; killed, restarted for the next case" in results[3].detail
    assert 1.0 <= results[3].seconds < 3.0
    assert (flaky.engine.starts, flaky.engine.crashes, flaky.engine.timeouts) == (3, 1, 1)


def test_pipelined_run_pins_failures_on_their_cases(flaky):
    """run_cases pipelines up to 64 requests; a crash or hang is still the case at the head."""
    texts = [f"t{i}" for i in range(400)]
    texts[70], texts[71], texts[250] = "SEGV", "SEGV", "HANG"
    results = run_cases(flaky, texts)
    statuses = {i: r.status for i, r in enumerate(results) if r.status != "ok"}
    assert statuses == {70: "crash", 71: "crash", 250: "timeout"}
    assert all(r.ids == list(t.encode()) for t, r in zip(texts, results) if r.status == "ok")
    assert flaky.engine.starts == 4


def test_big_texts_and_a_chatty_stderr_do_not_stall_the_pipes(flaky):
    big = "é" * 150_000  # 300 KB of request, 300,000 ids of reply: several times what a pipe holds
    results = run_cases(flaky, [big, "CHATTY", big, "x"])
    assert [r.status for r in results] == ["ok"] * 4
    assert results[0].ids == list(big.encode()) and results[3].ids == [120]
    assert flaky.encode(big) == list(big.encode())


def test_a_hung_engine_is_killed_and_replaced(flaky):
    (before,) = flaky.encode("PID")
    assert run_cases(flaky, ["HANG"])[0].status == "timeout"
    assert not _alive(before)
    (after,) = flaky.encode("PID")
    assert after != before and _alive(after)


def test_an_error_reply_is_an_error_and_the_engine_lives_on(flaky):
    (pid,) = flaky.encode("PID")
    results = run_cases(flaky, ["ERROR", "x"])
    assert [(r.status, r.ids) for r in results] == [("error", []), ("ok", [120])]
    assert results[0].detail.endswith("ERROR is not a text this engine likes")
    assert flaky.encode("PID") == [pid]


def test_a_stray_stdout_line_becomes_a_note(flaky):
    result = flaky.encode_with_notes("NOISE")
    assert result.ids == list(b"NOISE")
    assert len(result.notes) == 1 and result.notes[0].endswith("that is not the reply to request 1: this is not JSON")


def test_add_special_and_decode_travel(flaky):
    assert flaky.encode("hi", add_special=True) == [1, 104, 105]
    assert flaky.decode([104, 105]) == "hi"


def test_pieces_come_from_the_models_vocabulary(flaky):
    assert flaky.pieces([15043, 3186]) == ["▁Hello", "▁world"]
    assert flaky.version == ""


def test_an_engine_that_cannot_start(zoo):
    """An engine that never answers anything stops the run in one line after three starts, not
    one crash per case (a wrong script name gave 884 crash rows)."""
    engine = make_backend(FLAKY + " --die-at-start", zoo("llama-spm"), timeout=5.0)
    try:
        with pytest.raises(EngineDidNotStart, match="did not start: it died 3 times in a row before answering "
                                                    "anything; the last time: exited with status 3 on this case; "
                                                    "stderr: flaky_engine: told to die at start"):
            run_cases(engine, ["a", "b", "c", "d"])
        assert engine.engine.starts == 3
    finally:
        engine.close()


def test_an_engine_that_answered_once_is_restarted_case_by_case(zoo, tmp_path):
    """The twin: an engine that answered a case and then dies at every start gets a crash per case
    (its bug is the cases'), not a stop."""
    marker = tmp_path / "answered"
    script = tmp_path / "once.py"
    script.write_text("import json, os, sys\n"
                      f"if os.path.exists({str(marker)!r}):\n"
                      "    sys.exit(3)\n"
                      "line = sys.stdin.readline()\n"
                      f"open({str(marker)!r}, 'w').close()\n"
                      "print(json.dumps({'id': json.loads(line)['id'], 'ids': [1]}), flush=True)\n"
                      "sys.exit(3)\n", "utf-8")
    engine = make_backend(f"cmd:{sys.executable} {script}", zoo("llama-spm"), timeout=5.0)
    try:
        results = run_cases(engine, ["a", "b", "c", "d", "e"])
        assert [r.status for r in results] == ["ok"] + ["crash"] * 4
    finally:
        engine.close()


def test_a_program_that_does_not_exist(zoo):
    with pytest.raises(TokparityError, match=r"cannot start 'no-such-engine-xyz' \(No such file or directory\); "
                                             r"check the command"):
        make_backend("cmd:no-such-engine-xyz {gguf}", zoo("llama-spm"))


def test_placeholders_that_are_whole_words_are_paths_as_they_are(tmp_path):
    folder = tmp_path / "my models"
    folder.mkdir()
    model = ModelFiles("mine", {"gguf": folder / "a b.gguf", "tokenizer_json": tmp_path / "tokenizer.json"}, "local")
    argv = expand_command("{python} eng.py --model {gguf} --json={tokenizer_json} --name {name} {unknown}", model)
    assert argv == [sys.executable, "eng.py", "--model", str(folder / "a b.gguf"),
                    f"--json={tmp_path / 'tokenizer.json'}", "--name", "mine", "{unknown}"]
    with pytest.raises(TokparityError, match=r"model mine has no spm_model file for \{spm_model\} "
                                             r"\(it has: gguf, tokenizer_json\)"):
        expand_command("eng {spm_model}", model)
    # inside a larger word (a shell's script, perhaps), a space could split it: refused, with the safe way
    with pytest.raises(TokparityError, match=r"\{gguf\} sits inside a larger word .* write \"\$TOKPARITY_GGUF\" "):
        expand_command("eng --model={gguf}", model)


def test_example_llamacpp_engine_equals_the_llamacpp_backend(backend, golden, zoo):
    engine = make_backend(f"cmd:{{python}} {shlex.quote(str(EXAMPLES / 'llamacpp_engine.py'))} {{gguf}}",
                          zoo("llama-spm"))
    try:
        assert isinstance(engine, CmdBackend)
        llama = backend("llama.cpp", "llama-spm")
        for add_special in (False, True):
            texts = [c.text for c in golden("llama-spm")]
            results = run_cases(engine, texts, add_special=add_special)
            assert [r.status for r in results] == ["ok"] * len(texts)
            assert [r.ids for r in results] == [llama.encode(t, add_special) for t in texts]
        assert engine.decode([15043, 3186]) == "Hello world"
    finally:
        engine.close()


def test_close_ends_the_program(zoo):
    engine = make_backend(FLAKY, zoo("llama-spm"))
    (pid,) = engine.encode("PID")
    engine.close()
    engine.close()  # twice is fine
    assert not _alive(pid)


def test_crash_is_a_backend_crash_exception(flaky):
    with pytest.raises(BackendCrash):
        flaky.encode("SEGV")
    assert flaky.encode("z") == [122]


def test_one_request_at_a_time_crash_timeout_and_restart(flaky):
    """``encode`` (one request, the short path once the program has answered) keeps the same
    guarantees as the pipelined path: a crash or a hang is that case's, and the next one works."""
    (pid,) = flaky.encode("PID")
    with pytest.raises(BackendCrash, match="killed by SIGSEGV on this case; stderr: flaky_engine: about to segfault"):
        flaky.encode("SEGV")
    assert flaky.encode("a") == [97]
    with pytest.raises(BackendTimeout, match="no answer within 1 s; killed, restarted for the next case"):
        flaky.encode("HANG")
    assert flaky.encode_with_notes("NOISE").notes[0].endswith("this is not JSON")
    assert flaky.encode("é" * 5000) == list(("é" * 5000).encode())  # longer than PIPE_BUF: the long way
    (after,) = flaky.encode("PID")
    assert after != pid and not _alive(pid)
    assert (flaky.engine.starts, flaky.engine.crashes, flaky.engine.timeouts) == (3, 1, 1)


def test_an_engine_gone_between_requests_is_restarted_without_blame(flaky):
    assert flaky.encode("BYE") == list(b"BYE")
    flaky.engine.proc.wait(timeout=5)  # it has exited before the next request is written
    assert flaky.encode("a") == [97]
    assert (flaky.engine.starts, flaky.engine.crashes) == (2, 0)


def test_an_engine_that_keeps_crashing_is_given_up_on(flaky, monkeypatch):
    """After MAX_CRASHES crashes the program is not restarted: the rest of the cases are recorded
    as crashes that say why, in no time, instead of a process start and model load each."""
    from tokparity.backends import engine_process

    monkeypatch.setattr(engine_process, "MAX_CRASHES", 2)
    results = run_cases(flaky, ["a", "SEGV", "SEGV", "b", "c"])
    assert [r.status for r in results] == ["ok", "crash", "crash", "crash", "crash"]
    assert "not run: it crashed on 2 cases already and is not restarted again" in results[3].detail
    assert flaky.engine.starts == 2  # the first start, one restart after the first crash, none after the second


@pytest.mark.parametrize("typo, meant", [("{tokenizer.json}", "tokenizer_json"), ("{GGUF}", "gguf"),
                                         ("{spm-model}", "spm_model"), ("{tokenizer_jsn}", "tokenizer_json")])
def test_a_placeholder_typo_is_refused_naming_the_one_meant(zoo, typo, meant):
    """``{tokenizer.json}`` reached the engine as it was: it never started and the run recorded a
    crash per case (issue: the first hour)."""
    with pytest.raises(TokparityError, match=rf"\{{{re.escape(typo[1:-1])}\}} is not a placeholder; did you mean "
                                             rf"\{{{meant}\}}\?"):
        expand_command(f"python3 eng.py {typo}", zoo("llama-spm"))


@pytest.mark.parametrize("word", ["{model}", "{MODEL}", "{path}", "--model={model}", '"{model}"', "'{file}'",
                                  '--model="{model}"'])
def test_a_placeholder_for_any_file_lists_the_kinds(zoo, word):
    """``{model}`` is near ``{spm_model}``, but it means whatever file the model has: the kinds are
    listed, none guessed (a newcomer's friction, the first hour)."""
    with pytest.raises(TokparityError, match=r"is not a placeholder; name the model's file by its kind: \{gguf\}"
                                             r".*\{tokenizer_json\}") as e:
        expand_command(f"python3 eng.py {word}", zoo("llama-spm"))
    assert "did you mean" not in str(e.value)


def test_braces_that_are_the_commands_own_are_kept(zoo):
    """The twin: ``${HOME}``, a JSON argument and a ``python -c`` f-string are not placeholders."""
    argv = expand_command("""sh -c 'echo ${HOME}' '{"a": 1}' "print(f'{x}{file}')" "print(f'{path}')" {gguf}""",
                          zoo("llama-spm"))
    assert argv[:4] == ["sh", "-c", "echo ${HOME}", '{"a": 1}'] and argv[4:6] == ["print(f'{x}{file}')", "print(f'{path}')"]


def test_the_readmes_command_with_a_typo_and_an_engine_that_never_starts_are_one_line(tmp_path, zoo):
    """From the README, with ``{tokenizer.json}`` for ``{tokenizer_json}``: exit 2 in seconds, naming
    it. A script name that does not exist: exit 2, "did not start", its stderr (was 884 crashes)."""
    zoo("llama-bpe")
    engine = Path(__file__).resolve().parents[2] / "examples" / "engines" / "template_engine.py"
    for command, said in ((f"mine=cmd:{{python}} {engine} {{tokenizer.json}}", "did you mean {tokenizer_json}?"),
                          (f"mine=cmd:{{python}} {tmp_path / 'nope.py'} {{tokenizer_json}}", "did not start: it died 3 "
                                                                                           "times in a row")):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-bpe", "-c", "edge", "-b", command,
                               "-o", str(tmp_path / "out"), "-q"], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        # (what it says proves the count: a typo is refused before any start, a dead engine after three;
        # the clock only catches a run of every case, 884 crashes, however loaded the machine)
        assert done.returncode == 2 and time.monotonic() - started < 60, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("tokparity: error: ") and said in line, line
        if "did you mean" in said:  # (refused when -b is read: no report folder made, nothing to clean up)
            assert not (tmp_path / "out").exists()
