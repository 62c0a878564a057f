"""Hostile engines, model file names and signals: nothing a file says is run, no engine outlives
the run, every failure is a recorded case (never a traceback, never a wrong class), and a run
ends in seconds, not minutes. The engines are tests/engines/hostile_engine.py, each mode breaking
the protocol one way; most tests drive the real CLI in a subprocess."""

from __future__ import annotations

import csv
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tokparity.backends.cmd import expand_command
from tokparity.backends.registry import make_backend
from tokparity.backends.runner import run_cases
from tokparity.cli import TERMINATED
from tokparity.run.journal import JOURNAL_FILE
from tokparity.zoo import ModelFiles

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "tests" / "engines" / "hostile_engine.py"


def hostile(mode: str, *args: str) -> str:
    """``cmd:{python} …/hostile_engine.py MODE ARGS`` (placeholders such as ``{gguf}`` kept)."""
    return f"cmd:{{python}} {shlex.quote(str(ENGINE))} {mode} {' '.join(args)}".rstrip()


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}  # the subprocess imports this very tokparity


def tokparity(*args: str, cwd: Path | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True, env=env(),
                          cwd=cwd, timeout=timeout)


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tokparity", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env())


def corpus(folder: Path, texts: list[str]) -> Path:
    path = folder / "corp.jsonl"
    path.write_text("".join(json.dumps({"id": f"c{n}", "text": t}) + "\n" for n, t in enumerate(texts)), "utf-8")
    return path


def alive(pid: int) -> bool:
    """Running (a zombie, killed and waiting for a parent to reap it, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def kill_if_alive(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def wait_for_file(path: Path, proc: subprocess.Popen | None = None, seconds: float = 30.0) -> str:
    end = time.monotonic() + seconds
    while not (path.exists() and path.read_text().strip()):
        assert proc is None or proc.poll() is None, proc.communicate() if proc else ""
        assert time.monotonic() < end, f"{path} not written within {seconds} s"
        time.sleep(0.05)
    return path.read_text().strip()


def rows(out: Path) -> list[dict]:
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def classes(out: Path, backend: str, op: str = "encode") -> dict:
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    return next(r["classes"] for r in summary["runs"] if r["backend"] == backend and r["op"] == op)


# -- 1. commands run from data ----------------------------------------------------------------------

HOSTILE_NAME = "m;touch${IFS}PWNED;#.gguf"


@pytest.fixture
def hostile_model(tmp_path, zoo) -> Path:
    """llama-spm's GGUF under a name that runs `touch PWNED` if pasted into a shell script."""
    path = tmp_path / HOSTILE_NAME
    shutil.copyfile(zoo("llama-spm").path("gguf"), path)
    return path


def test_a_model_file_name_pasted_into_sh_c_is_refused_not_run(tmp_path, hostile_model):
    script = f"{{python}} {shlex.quote(str(ENGINE))} echo {{gguf}}"  # the README's sh -c form
    done = tokparity("compare", str(hostile_model), "-c", str(corpus(tmp_path, ["hi"])), "-b", "ref",
                     "-b", f"cmd:sh -c {shlex.quote(script)}", "-o", str(tmp_path / "out"), "-q", cwd=tmp_path)
    assert not (tmp_path / "PWNED").exists()
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and 'write "$TOKPARITY_GGUF" there instead' in done.stderr


def test_the_environment_variable_form_works_with_any_file_name(tmp_path, hostile_model):
    script = f'{{python}} {shlex.quote(str(ENGINE))} echo "$TOKPARITY_GGUF"'
    out = tmp_path / "out"
    done = tokparity("compare", str(hostile_model), "-c", str(corpus(tmp_path, ["hi", "there"])), "-b", "ref",
                     "-b", f"cmd:sh -c {shlex.quote(script)}", "-o", str(out), "-q", cwd=tmp_path)
    assert not (tmp_path / "PWNED").exists()
    assert done.returncode == 1, done.stderr  # the echo engine answers bytes: mismatches, not crashes
    assert {r["class"] for r in rows(out)} != {"crash"} and len(rows(out)) == 2


def test_a_placeholder_that_is_a_whole_word_is_the_path_exactly(tmp_path):
    path = tmp_path / HOSTILE_NAME
    model = ModelFiles("m", {"gguf": path}, "local")
    assert expand_command("{python} eng.py {gguf}", model) == [sys.executable, "eng.py", str(path)]


# -- 2. py: engines answer ints ------------------------------------------------------------------------

@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "child"])
def test_a_py_engine_returning_floats_or_bools_is_a_failure(tmp_path, zoo, isolate):
    module = tmp_path / "bad_engine.py"
    module.write_text("def floats(text, add_special, parse_special):\n    return [1.5]\n\n"
                      "def bools(text, add_special, parse_special):\n    return [True, False]\n")
    for attr, shown in (("floats", "[1.5]"), ("bools", "[True, False]")):
        backend = make_backend(f"py:{module}:{attr}", zoo("llama-spm"), isolate=isolate)
        try:
            (result,) = run_cases(backend, ["hi"])
        finally:
            backend.close()
        assert result.status == "error" and result.ids == []
        assert f"engine returned {shown}" in result.detail and "not a list of ints" in result.detail


# -- 3. SIGTERM ------------------------------------------------------------------------------------------

def test_sigterm_writes_the_reports_and_stops_a_hung_engine(tmp_path, zoo):
    zoo("llama-spm")
    pid_file, out = tmp_path / "engine.pid", tmp_path / "out"
    proc = start("compare", "llama-spm", "-c", str(corpus(tmp_path, ["a", "b", "c"])), "-b", "ref",
                 "-b", hostile("hang", str(pid_file)), "--timeout", "300", "-o", str(out), "-q")
    engine = int(wait_for_file(pid_file, proc))
    try:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == TERMINATED == 143, err
        assert "Traceback" not in err
        assert json.loads((out / "summary.json").read_text("utf-8"))["complete"] is False
        assert wait_gone(engine), "the hung engine outlived the run"
    finally:
        kill_if_alive(engine)
        if proc.poll() is None:
            proc.kill()


# -- 4. an engine that forks and exits -----------------------------------------------------------------

def test_an_engine_that_forks_and_exits_is_a_crash_and_its_child_is_killed(tmp_path, zoo):
    pid_file = tmp_path / "child.pid"
    backend = make_backend(hostile("fork-exit", str(pid_file)), zoo("llama-spm"), timeout=5.0, startup_timeout=0.5)
    child = None
    try:
        started = time.monotonic()
        (result,) = run_cases(backend, ["a"])
        child = int(wait_for_file(pid_file))
        assert result.status == "crash" and "exited with status 7 on this case" in result.detail
        assert time.monotonic() - started < 3.0  # its exit is seen at once, not at the timeout
        assert wait_gone(child), "the engine's child outlived it"
    finally:
        backend.close()
        if child is not None:
            kill_if_alive(child)


def test_a_child_that_left_the_engines_group_is_killed_with_the_engine(tmp_path, zoo):
    """A daemon-like child (setsid) is out of reach of killpg; the engine's mark in its
    environment, which it inherited, finds it."""
    pid_file = tmp_path / "child.pid"
    backend = make_backend(hostile("daemon", str(pid_file)), zoo("llama-spm"), timeout=5.0)
    child = None
    try:
        (result,) = run_cases(backend, ["a"])
        child = int(wait_for_file(pid_file))
        assert result.status == "ok"
        deadline = time.monotonic() + 5
        while os.getsid(child) != child and time.monotonic() < deadline:
            time.sleep(0.01)  # (the engine writes the pid file as it forks, the child calls setsid after)
        assert os.getsid(child) == child  # it did leave the group
    finally:
        backend.close()
    try:
        assert wait_gone(child), "the engine's setsid child outlived it"
    finally:
        kill_if_alive(child)


PY_DAEMON = """import os, sys
if not os.path.exists({pid_file!r}):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        clean = {{k: v for k, v in os.environ.items() if not k.startswith("TOKPARITY")}}
        os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)"], clean)
    with open({pid_file!r}, "w") as f:
        f.write(str(pid))


def encode(text):
    return list(text.encode())
"""


@pytest.mark.parametrize("op", ["compare", "encode", "py"])
def test_a_child_that_left_the_group_and_dropped_the_mark_is_killed_by_the_command(tmp_path, zoo, op):
    """A daemon-like child (setsid) that also runs on without the engine's mark in its environment is
    out of reach of the engine's own cleanup (a cmd: engine's, or a py: engine's child process); the
    ``tokparity`` command is its subreaper (Linux) and kills it before it ends."""
    zoo("llama-spm")
    pid_file = tmp_path / "child.pid"
    engine = hostile("daemon-unmarked", str(pid_file))
    if op == "py":
        (tmp_path / "py_daemon.py").write_text(PY_DAEMON.format(pid_file=str(pid_file)), "utf-8")
        engine = f"py:{tmp_path / 'py_daemon.py'}:encode"
    args = ("compare", "llama-spm", "-c", str(corpus(tmp_path, ["a", "b"])), "-b", engine, "-o",
            str(tmp_path / "out"), "-q") if op != "encode" else ("encode", "llama-spm", "a b", "-b", engine)
    done = tokparity(*args)
    child = int(wait_for_file(pid_file))
    try:
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
        assert wait_gone(child), "the engine's setsid child without its mark outlived the command"
        assert "tokparity: note: stopped 1 process(es) an engine left running" in done.stderr, done.stderr
    finally:
        kill_if_alive(child)


def test_what_a_restarted_engine_leaves_behind_is_reaped_as_the_run_goes(tmp_path, zoo):
    """The command adopts the orphans of its engines (above), so it must reap them too: an engine
    that crashes at every other request, leaving a child its group kill ends, is restarted 15 times
    and counts its parent's zombies at each crash; they do not pile up (before: one more a restart)."""
    zoo("llama-spm")
    counts = tmp_path / "zombies.txt"
    done = tokparity("compare", "llama-spm", "-c", str(corpus(tmp_path, [f"text {n}" for n in range(30)])), "-b",
                     hostile("fork-crash", str(counts)), "-o", str(tmp_path / "out"), "-q", timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    seen = [int(n) for n in counts.read_text().split()]
    assert len(seen) >= 10 and max(seen) <= 3, seen  # (one or two not yet dead at the reaping: the next one reaps them)


def test_an_answer_of_millions_of_ids_is_not_compared_and_costs_seconds(tmp_path, zoo):
    """Aligning 2,000,000 ids with the oracle's took minutes per case; no tokenizer gives more
    ids than a text has bytes (plus a few), so such an answer is a failure of that case."""
    zoo("llama-spm")
    out = tmp_path / "out"
    started = time.monotonic()
    done = tokparity("compare", "llama-spm", "-c", str(corpus(tmp_path, ["Hello world", "two"])),
                     "-b", hostile("huge"), "-o", str(out), "-q", "--no-diagnose")
    assert done.returncode == 1, done.stderr
    assert time.monotonic() - started < 30
    found = [r for r in rows(out) if r["backend"].startswith("cmd:")]
    assert [r["class"] for r in found] == ["crash", "crash"]
    assert "2,000,000 ids for a text of 11 bytes: more than any tokenizer gives" in found[0]["evidence"]


# -- 5. an engine that never reads: seconds, and the truth ------------------------------------------

def test_an_engine_that_never_reads_costs_seconds_and_is_said_to_hang(tmp_path, zoo):
    """It never answers anything: after three starts the run stops in one line saying it hung."""
    zoo("llama-spm")
    out = tmp_path / "out"
    started = time.monotonic()
    done = tokparity("compare", "llama-spm", "-c", str(corpus(tmp_path, [f"case {n}" for n in range(21)])),
                     "-b", "ref", "-b", hostile("never-read"), "--timeout", "1", "-o", str(out), "-q")
    seconds = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    assert seconds < 40, f"{seconds:.0f} s for an engine that never answers"
    (error,) = done.stderr.strip().splitlines()
    assert "did not start: it hung 3 times in a row without answering anything" in error, error
    assert "died" not in error


# -- 6. a reply that is not JSON ---------------------------------------------------------------------

def test_a_reply_that_is_not_json_is_a_protocol_error_quoting_it(zoo):
    backend = make_backend(hostile("not-json"), zoo("llama-spm"), timeout=0.5, startup_timeout=0.5)
    try:
        (result,) = run_cases(backend, ["a"])
    finally:
        backend.close()
    assert result.status == "crash"
    assert "protocol error: it wrote '{'id': 1, 'ids': [1, 2 <- not JSON\\x1b[31m' instead of a JSON reply" \
        in result.detail  # the escape sequence escaped: it cannot colour a terminal or a report


# -- 7. a decoder that hangs is a timeout --------------------------------------------------------------

def test_a_decode_timeout_is_a_timeout_not_a_round_trip_bug(tmp_path, zoo):
    zoo("llama-spm")
    out = tmp_path / "out"
    engine = hostile("decode-hang", "{gguf}")
    done = tokparity("compare", "llama-spm", "-c", str(corpus(tmp_path, ["Hello", "world"])), "-b", "ref",
                     "-b", engine, "--ops", "encode,decode", "--timeout", "1", "-o", str(out), "-q")
    assert done.returncode == 1, done.stderr
    assert classes(out, engine, "decode") == {"timeout": 2}
    assert all(f"decode failed on {engine}'s side" in r["evidence"] for r in rows(out) if r["op"] == "decode")


# -- 8. text an engine sends that UTF-8 cannot hold ---------------------------------------------------

def test_lone_surrogates_from_an_engine_are_escaped_text(tmp_path, zoo):
    zoo("llama-spm")
    out = tmp_path / "out"
    engine = hostile("surrogates", "{gguf}")
    done = tokparity("compare", "llama-spm", "-c", str(corpus(tmp_path, ["Hello", "ERR"])), "-b", "ref",
                     "-b", engine, "--ops", "encode,decode", "-o", str(out), "-q")
    assert "Traceback" not in done.stderr
    assert done.returncode == 1, done.stderr
    assert classes(out, engine) == {"crash": 1}  # encoding "ERR"
    assert classes(out, engine, "decode") == {"decode-roundtrip": 2}  # the oracle's ids of both texts
    evidence = " ".join(r["evidence"] for r in rows(out))
    assert "backend '\\\\udc80'" in evidence and "no \\udc82 thanks" in evidence
    assert len((out / JOURNAL_FILE).read_bytes().decode("utf-8").splitlines()) == 5  # header + 2 cases × 2 ops


# -- 9. --jobs -------------------------------------------------------------------------------------------

def test_jobs_are_capped_at_the_cases_and_the_cpus(tmp_path, zoo):
    from tokparity.run.options import CompareOptions, Services
    from tokparity.run.parallel import MAX_JOBS_PER_CPU, _capped_jobs

    said: list[str] = []
    assert _capped_jobs(CompareOptions(jobs=100000, services=Services(progress=said.append))) == (os.cpu_count() or 1) * MAX_JOBS_PER_CPU
    assert said == [f"--jobs 100000: capped at {(os.cpu_count() or 1) * MAX_JOBS_PER_CPU} worker processes "
                    f"({MAX_JOBS_PER_CPU} per CPU)"]
    zoo("llama-spm")
    done = tokparity("compare", "llama-spm", "-c", str(corpus(tmp_path, ["a", "b", "c"])), "-b", "ref",
                     "-j", "40", "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "3 task(s) over 3 worker processes" in done.stderr
    refused = tokparity("compare", "llama-spm", "-j", "-1", "-o", str(tmp_path / "out2"))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "--jobs" in refused.stderr


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                pass
    return found


def test_workers_of_a_parent_killed_by_sigkill_exit_quietly(tmp_path, zoo):
    zoo("llama-spm")
    out = tmp_path / "out"
    proc = start("compare", "llama-spm", "-c", "edge", "-b", "ref", "-b", hostile("echo"), "-j", "2",
                 "-o", str(out), "-q")
    workers: list[int] = []
    try:
        end = time.monotonic() + 60
        # (both workers up and judging: the journal holds a case; waiting for more let a fast run end first)
        while len(workers) < 2 or not (out / JOURNAL_FILE).exists() or \
                len((out / JOURNAL_FILE).read_bytes().splitlines()) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end
            workers = _children(proc.pid)
            time.sleep(0.02)
        assert len(workers) == 2
        proc.kill()
        _, err = proc.communicate(timeout=30)  # EOF once the workers, which share stderr, are gone
        assert "Traceback" not in err and "Error" not in err, err
        assert all(wait_gone(w) for w in workers)
    finally:
        for w in workers:
            kill_if_alive(w)


# -- 10. --timeout --------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["inf", "1e7", "nan", "-inf"])
def test_a_timeout_that_is_no_time_is_refused_in_one_line(tmp_path, value):
    done = tokparity("compare", "llama-spm", "-b", "ref", f"--timeout={value}", "-o", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--timeout: must be a number of seconds above 0" in done.stderr
    assert not (tmp_path / "out").exists()


def test_an_engine_takes_a_huge_timeout(zoo):
    for timeout in (1e7, float("inf")):
        backend = make_backend(hostile("echo"), zoo("llama-spm"), timeout=timeout)
        try:
            assert [(r.status, r.ids) for r in run_cases(backend, ["ab"])] == [("ok", [97, 98])]
        finally:
            backend.close()


def test_ids_out_of_the_vocabulary_in_regress_and_fuzz_are_a_mismatch_not_a_traceback(tmp_path, zoo):
    """An engine answering ids beyond the vocabulary (and beyond any int32 table) made ``regress``
    and ``fuzz`` end in an IndexError while a unigram tie was looked for, with no reports (a fifth
    independent campaign's find); ``compare`` said it in one row."""
    zoo("botchan-unigram")
    engine = tmp_path / "wild.py"
    engine.write_text("import json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n"
                      "    print(json.dumps({'id': r['id'], 'ids': [5000, 999999]}), flush=True)\n", "utf-8")
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello\nworld\n", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def tokparity(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tokparity", *argv], env=env, capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)

    assert tokparity("regress", "--update", "botchan-unigram", "-c", str(corpus), "--goldens", "g").returncode == 0
    for argv in (("regress", "botchan-unigram", "--goldens", "g"), ("fuzz", "botchan-unigram", "--seconds", "2")):
        done = tokparity(*argv, "-b", f"wild=cmd:{{python}} {engine}", "-o", argv[0], "-q")
        assert done.returncode == 1 and "Traceback" not in done.stderr, (argv, done.stdout, done.stderr)
        assert (tmp_path / argv[0] / "summary.json").is_file()
