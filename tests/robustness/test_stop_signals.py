"""Every signal that ends tokparity ends its children (issue: hostile input, round 3).

A chat run whose template loops for ever keeps the template sandbox's child at full CPU. SIGHUP (a
closed terminal) and SIGQUIT (Ctrl-\\) ended tokparity at once and left that child running for
ever; now they end a run as Ctrl-C does (the reports written, exit 128 + the signal). SIGKILL
cannot be handled: the sandbox's child asks Linux to end it with its parent."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOOP = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"


@pytest.fixture
def looping(tmp_path: Path, zoo) -> Path:
    """Qwen3's tokenizer with a chat template that loops for ever."""
    qwen3 = zoo("qwen3")
    folder = tmp_path / "looping"
    folder.mkdir()
    shutil.copy(qwen3.path("tokenizer_json"), folder / "tokenizer.json")
    config = json.loads(Path(qwen3.path("tokenizer_config")).read_text("utf-8"))
    config["chat_template"] = LOOP
    (folder / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    return folder


def sandboxes_of(parent: int) -> list[int]:
    """The template sandboxes ``parent`` started (running, not zombies)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == parent and fields[0] != "Z" and b"tokparity.chat.sandbox" in cmdline:
            found.append(int(stat.parent.name))
    return found


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not running(pid)


def start_looping_run(folder: Path, out: Path) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "tokparity", "compare", str(folder), "--ops", "chat", "-b", "hf",
                             "-o", str(out), "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 120
    while not (children := sandboxes_of(proc.pid)):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    return proc, children[0]


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2,
                                    signal.SIGALRM])
def test_a_stop_signal_ends_the_run_and_its_sandbox(looping, tmp_path, signum):
    """SIGUSR1, SIGUSR2 and SIGALRM ended tokparity by their default action, with no cleanup: only the
    journal written, a hung engine left running (an independent hostile campaign's find)."""
    proc, sandbox = start_looping_run(looping, tmp_path / "out")
    try:
        time.sleep(1.0)  # (the child is rendering the loop)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + signum, err
        assert "Traceback" not in err
        assert gone(sandbox), "the template sandbox outlived the run"
    finally:
        for pid in (sandbox, proc.pid):
            if running(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_killed_run_takes_its_sandbox_with_it(looping, tmp_path):
    proc, sandbox = start_looping_run(looping, tmp_path / "out")
    try:
        proc.kill()
        proc.communicate(timeout=30)
        assert gone(sandbox), "the template sandbox outlived a killed tokparity"
    finally:
        if running(sandbox):
            os.kill(sandbox, signal.SIGKILL)


def marked(token: str) -> list[int]:
    """Running processes whose environment carries ``MARK=token`` (what the run started inherits it)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"MARK={token}".encode() in environ.read_bytes().split(b"\0") and running(int(environ.parent.name)):
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGQUIT, signal.SIGKILL])
def test_a_stop_signal_during_a_release_install_stops_pip(tmp_path, zoo, signum):
    """SIGHUP while a release's virtualenv was made left `python -m venv` or pip running; the
    install is stopped with the run, and its half-made virtualenv removed. After a SIGKILL, which
    tokparity cannot handle, each step of the install gets one from Linux (and the half-made
    virtualenv stays, to be made again: it has no ``ready.json``)."""
    model = tmp_path / "model"
    model.mkdir()
    shutil.copy(zoo("llama-bpe").files["tokenizer_json"], model / "tokenizer.json")
    (tmp_path / "one.jsonl").write_text('{"id": "a", "text": "hi"}\n', "utf-8")
    token = os.urandom(6).hex()
    proc = subprocess.Popen([sys.executable, "-m", "tokparity", "compare", str(model), "-c", str(tmp_path / "one.jsonl"),
                             "-b", "hf@0.21.4", "-o", str(tmp_path / "out"), "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "TOKPARITY_CACHE": str(tmp_path / "cache"),
                                 "MARK": token})
    try:
        deadline = time.monotonic() + 120
        while not any(pid != proc.pid for pid in marked(token)):  # (venv or pip started)
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == (-signum if signum == signal.SIGKILL else 128 + signum), err
        deadline = time.monotonic() + 30  # (a step killed by SIGKILL may leave a child of its to finish: ensurepip)
        while marked(token) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marked(token) == [], "the install outlived the run"
        if signum != signal.SIGKILL:
            assert not list((tmp_path / "cache" / "releases").glob("*/bin"))  # (no half-made virtualenv kept)
    finally:
        for pid in marked(token):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()


@pytest.mark.xdist_group("ray")  # (one Ray at a time on this machine: tests/test_cluster.py)
def test_sigterm_ends_a_ray_run_as_ctrl_c_does(tmp_path, zoo):
    """``ray.init`` put Ray's own SIGTERM handler in place: a SIGTERM dumped a trace and aborted
    (exit 134), wrote no report and left the local Ray's agents running (a hostile-input helper's
    find). tokparity's handlers are put back once Ray has started."""
    zoo("llama-spm")
    engine = tmp_path / "slow.py"
    engine.write_text("import json, sys, time\n"
                      "for line in sys.stdin:\n"
                      "    req = json.loads(line)\n"
                      "    time.sleep(0.03)\n"
                      "    print(json.dumps({'id': req['id'], 'ids': [1]}), flush=True)\n", "utf-8")
    corpus = tmp_path / "many.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"k{i}", "text": f"text number {i}"}) + "\n" for i in range(600)),
                      "utf-8")
    token = os.urandom(6).hex()
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", str(corpus), "-b",
                             f"mine=cmd:{sys.executable} {engine} {{gguf}}", "--ray", "-o", str(out), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "MARK": token})
    try:
        deadline = time.monotonic() + 120
        while not ((out / "cases.jsonl").is_file() and (out / "cases.jsonl").read_bytes().count(b"\n") > 3):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 143, err
        assert json.loads((out / "summary.json").read_text("utf-8"))["complete"] is False
        deadline = time.monotonic() + 20
        while marked(token) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marked(token) == [], "Ray's processes outlived the run"
    finally:
        for pid in marked(token):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()


def test_regress_stopped_by_a_signal_writes_the_reports_of_the_models_judged(tmp_path, zoo):
    """regress keeps no journal: a stop signal once the first model is judged writes the reports of
    that model (marked incomplete) and exits 128 + the signal, saying that a new run is needed."""
    later = ["botchan-unigram", "llama-bpe", "qwen3"]  # (seconds of work left when the signal comes)
    for name in ["llama-spm", *later]:
        zoo(name)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "tokparity", "regress", "llama-spm", *later, "-b", "ref",
                             "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stderr is not None
    said = []
    for line in proc.stderr:  # progress, then "llama-spm: N cases × 2 settings against llama-spm.jsonl.gz"
        said.append(line)
        if line.startswith("llama-spm: ") and "against" in line:
            break
    else:
        raise AssertionError("".join(said)[-3000:])
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and "regress keeps no journal: run it again" in err, err
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["complete"] is False
    assert {r["model"] for r in summary["runs"]} == {"llama-spm"}
    assert (out / "report.html").is_file() and (out / "mismatches.csv").is_file()


def engines_running(marker: bytes) -> list[int]:
    """The processes whose command line holds ``marker`` (running, not zombies)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes() and running(int(cmdline.parent.name)):
                found.append(int(cmdline.parent.name))
        except (OSError, ValueError):
            continue
    return found


def test_a_second_signal_during_the_clean_up_of_a_parallel_run_leaves_no_engine(tmp_path, zoo):
    """``-j 2`` with a hung ``cmd:`` engine, then SIGTERM twice, half a second apart: both engines
    were left running (a fifth independent campaign's find). The second signal cut the clean-up of
    the first short: in tokparity, and in each worker, where the parent's death sends one more."""
    zoo("llama-spm")
    hang = tmp_path / "hang_engine.py"
    hang.write_text("import sys, time\nsys.stdin.readline()\ntime.sleep(1000)\n", "utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", "edge", "-c", "emoji",
                             "-j", "2", "-b", f"h=cmd:{{python}} {hang}", "-o", str(tmp_path / "out"), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 120
        while len(engines_running(str(hang).encode())) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        assert proc.returncode == 128 + signal.SIGTERM
        deadline = time.monotonic() + 10
        while engines_running(str(hang).encode()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert engines_running(str(hang).encode()) == []
    finally:
        for pid in engines_running(str(hang).encode()):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
