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


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM])
def test_a_stop_signal_ends_the_run_and_its_sandbox(looping, tmp_path, signum):
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
