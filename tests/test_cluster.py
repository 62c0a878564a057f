"""``compare --ray ADDRESS`` on a real two-node Ray cluster (two ``ray start`` on this machine,
one CPU each) gives the reports of ``--jobs 1``: the same summary.json (apart from the timings),
the same mismatches.csv, the same journal records in the same order, and so does a Ray run
interrupted and resumed; ``regress --ray`` gives the reports of one process too. Without Ray, or
with no cluster at the address: one line, exit 2."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from report_files import csv_rows, summary_without_timing

import tokparity
from tokparity.run.journal import JOURNAL_FILE

ROOT = Path(tokparity.__file__).resolve().parent.parent  # on the nodes' PYTHONPATH: the tokparity under test
GREEDY = f"greedy=cmd:{{python}} {Path(__file__).parents[1] / 'examples' / 'engines' / 'greedy_engine.py'} {{gguf}} --file-space-prefix"
RUN = ["llama-spm", "botchan-unigram", "-c", "edge", "-b", "ref", "-b", "llama.cpp", "-b", GREEDY, "-q"]
CASES = 884  # edge's cases, per model
# (one Ray at a time on this machine: a local ray.init beside a running cluster would join it)
pytestmark = pytest.mark.xdist_group("ray")


def test_the_ray_tests_run_on_one_worker(request):
    """pytest-xdist keeps a group on one worker by marking its tests' node ids. pytest 9.2 drops the
    mark, and two Rays would start side by side (pyproject.toml keeps an earlier pytest)."""
    if hasattr(request.config, "workerinput") and request.config.getoption("dist") == "loadgroup":
        assert request.node.nodeid.endswith("@ray"), f"pytest {pytest.__version__} ignores pytest-xdist's groups"


# The nodes and the drivers share a token of this session's own: not ~/.ray/auth_token, which
# Ray makes on a first local ray.init() and then uses on a head node only (a second node, not
# told, fails to join), and not "disabled" either.
TOKEN = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


def env(extra_path: str | None = None) -> dict[str, str]:
    paths = [p for p in (extra_path, str(ROOT), os.environ.get("PYTHONPATH")) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "RAY_USAGE_STATS_ENABLED": "0", **TOKEN}


def tokparity_cli(*args: str, extra_path: str | None = None, timeout: float = 120, command: str = "compare",
                  ray_address: str | None = None) -> subprocess.CompletedProcess:
    """``ray_address``: $RAY_ADDRESS, which ``--ray auto`` follows."""
    environment = env(extra_path) | ({"RAY_ADDRESS": ray_address} if ray_address else {})
    return subprocess.run([sys.executable, "-m", "tokparity", command, *args], env=environment,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def records(out: Path) -> list[dict]:
    """The journal's case records, without the seconds each backend took, by (model slot, case):
    within a model they are written in case order, but a model's first records may be written
    before the previous model's last ones (its actor starts as soon as every case before is sent),
    as with --jobs."""
    lines = (out / JOURNAL_FILE).read_bytes().split(b"\n")[1:-1]  # (not splitlines: texts hold U+2028)
    found = [{k: v for k, v in json.loads(line).items() if k not in ("seconds", "seal")} for line in lines]
    for model in {r["slot"] for r in found}:
        ns = [r["n"] for r in found if r["slot"] == model]
        assert ns == sorted(ns), f"model {model}'s records are not in case order"
    return sorted(found, key=lambda r: (r["slot"], r["n"]))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- a two-node Ray cluster of our own --------------------------------------------------------------

def processes_under(mark: str) -> set[int]:
    """Our cluster's processes: those whose command line names its temp dir, and their children
    (an actor's worker names no dir). Not `ray stop`, which stops every Ray on the machine."""
    parent_of, marked = {}, set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
            parent_of[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if mark.encode() in command:
            marked.add(int(entry))
    grew = True
    while grew:
        children = {pid for pid, parent in parent_of.items() if parent in marked} - marked
        marked |= children
        grew = bool(children)
    return marked


def stop_processes(mark: str) -> None:
    for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 2.0)):
        for pid in processes_under(mark):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        while processes_under(mark) and time.monotonic() < deadline:
            time.sleep(0.1)


@pytest.fixture(scope="module")
def cluster():
    """The head (1 CPU) and a second node (1 CPU) joined to it; their address."""
    ray = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
    assert ray, "the ray command is not installed beside this Python"
    temp = tempfile.mkdtemp(prefix="tpray", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    address = f"127.0.0.1:{free_port()}"
    common = ["--num-cpus=1", f"--temp-dir={temp}", "--disable-usage-stats", "--node-ip-address=127.0.0.1"]
    try:
        for node in (["--head", f"--port={address.rsplit(':', 1)[1]}", "--include-dashboard=false"],
                     [f"--address={address}"]):
            started = subprocess.run([ray, "start", *node, *common], env=env(), capture_output=True, text=True,
                                     timeout=90, stdin=subprocess.DEVNULL)
            assert started.returncode == 0, started.stderr[-2000:]
        yield address
    finally:
        stop_processes(temp)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory, zoo) -> Path:
    zoo("llama-spm")
    zoo("botchan-unigram")
    out = tmp_path_factory.mktemp("one") / "out"
    done = tokparity_cli(*RUN, "-o", str(out), "--jobs", "1")
    assert done.returncode == 1, done.stderr  # the greedy engine's mismatches are unexplained
    return out


@pytest.fixture(scope="module")
def on_ray(tmp_path_factory, cluster, one_process) -> Path:
    out = tmp_path_factory.mktemp("ray") / "out"
    done = tokparity_cli(*RUN, "-o", str(out), "--ray", cluster)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""  # -q: nothing of Ray's own logging either
    return out


def test_ray_cluster_gives_the_reports_of_one_process(on_ray, one_process, cluster):
    assert summary_without_timing(on_ray) == summary_without_timing(one_process)
    assert csv_rows(on_ray) == csv_rows(one_process)
    assert len(csv_rows(on_ray)) > 100  # real mismatches, compared row by row
    assert records(on_ray) == records(one_process)  # counted and journaled in case order
    assert [r["n"] for r in records(on_ray)] == list(range(CASES)) * 2
    timing = json.loads((on_ray / "summary.json").read_text("utf-8"))["timing"]
    assert timing["jobs"] == 2  # the actors had both nodes' CPUs
    header = json.loads((on_ray / JOURNAL_FILE).read_bytes().split(b"\n")[0])
    assert header["args"]["ray"] == cluster


def test_an_interrupted_ray_run_resumes_on_ray(tmp_path, on_ray, one_process, cluster):
    """The journal of a Ray run cut after 500 cases of the first model, resumed with no --ray:
    the header's address is used, and the reports are those of the uninterrupted run."""
    out = tmp_path / "out"
    out.mkdir()
    lines = (on_ray / JOURNAL_FILE).read_bytes().split(b"\n")
    (out / JOURNAL_FILE).write_bytes(b"\n".join(lines[:501]) + b"\n")
    done = tokparity_cli("--resume", str(out), "-q")
    assert done.returncode == 1, done.stderr
    assert summary_without_timing(out) == summary_without_timing(one_process)
    assert csv_rows(out) == csv_rows(one_process)
    assert records(out) == records(one_process)
    assert json.loads((out / "summary.json").read_text("utf-8"))["timing"]["jobs"] == 2  # on Ray again


LOCAL_RAY = "/tmp/ray/session_"  # a Ray that ray.init starts here keeps its files (and says so) there


def wait_until_gone(pids: set[int], limit: float = 30.0) -> set[int]:
    """Those of ``pids`` still running after ``limit`` seconds (zombies count as gone)."""
    deadline = time.monotonic() + limit
    while True:
        alive = set()
        for pid in pids:
            try:
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(pid)
            except (OSError, IndexError):
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def command_lines(pids: set[int]) -> list[str]:
    lines = []
    for pid in sorted(pids):
        try:
            lines.append(f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200])
        except OSError:
            lines.append(f"{pid}: gone")
    return lines


def local_ray_run(out: Path) -> tuple[subprocess.Popen, set[int]]:
    """``compare RUN --ray`` started here, once 300 cases are journaled; the processes of its Ray."""
    before = processes_under(LOCAL_RAY)
    proc = subprocess.Popen([sys.executable, "-m", "tokparity", "compare", *RUN, "-o", str(out), "--ray"], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    journal = out / JOURNAL_FILE
    deadline = time.monotonic() + 180
    while not journal.exists() or len(journal.read_bytes().split(b"\n")) < 300:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no 300 journal lines in 180 s"
        time.sleep(0.05)
    ours = processes_under(LOCAL_RAY) - before
    assert ours, "no process of the local Ray was found"
    return proc, ours


def test_local_ray_ctrl_c_keeps_the_cases_done_stops_its_ray_then_resumes(tmp_path, one_process):
    """``--ray`` alone starts a Ray here; Ctrl-C halfway: exit 130, the reports of the cases done,
    every process of that Ray gone; the resume (on a local Ray again, from the journal's header)
    gives the reports of one process, and leaves nothing running either."""
    out = tmp_path / "out"
    proc, ours = local_ray_run(out)
    journal = out / JOURNAL_FILE
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err
    assert f"continue with: tokparity compare --resume {out}" in err
    partial = summary_without_timing(out)
    assert partial["complete"] is False
    done = len(journal.read_bytes().split(b"\n")) - 2  # (the header; the newline after the last line)
    assert sum(r["cases"] + r["skipped"] for r in partial["runs"] if r["backend"] == "ref") == done
    assert 0 < done < 2 * CASES
    assert wait_until_gone(ours) == set()

    before = processes_under(LOCAL_RAY)
    resumed = tokparity_cli("--resume", str(out), "-q", timeout=300)
    assert resumed.returncode == 1, resumed.stderr
    assert summary_without_timing(out) == summary_without_timing(one_process)
    assert csv_rows(out) == csv_rows(one_process)
    assert json.loads((out / "summary.json").read_text("utf-8"))["timing"]["jobs"] == (os.cpu_count() or 1)
    assert wait_until_gone(processes_under(LOCAL_RAY) - before) == set()


def test_local_ray_killed_with_sigkill_leaves_no_process_of_its_ray(tmp_path, zoo):
    """A SIGKILL gives tokparity no moment to stop the Ray it started (its raylet, its dashboard and
    runtime-environment agents are not its children). The reaper beside the run stops them all."""
    zoo("llama-spm")
    zoo("botchan-unigram")
    proc, ours = local_ray_run(tmp_path / "out")
    assert len(ours) >= 3, "the local Ray's processes were not found"
    proc.kill()
    proc.communicate(timeout=30)
    left = wait_until_gone(ours)
    assert left == set(), f"processes of the killed run's Ray are still running: {command_lines(left)}"
    assert proc.returncode == -signal.SIGKILL


def test_without_ray_installed_one_line(tmp_path, zoo):
    zoo("llama-spm")
    blocker = tmp_path / "noray"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['ray'] = None  # import ray: ImportError\n")
    out = tmp_path / "out"
    done = tokparity_cli("llama-spm", "-c", "edge", "-b", "ref", "-o", str(out), "--ray", extra_path=str(blocker))
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["tokparity: error: --ray needs Ray: pip install 'tokparity[ray]'"]
    assert (out / JOURNAL_FILE).is_file()


def test_no_cluster_at_the_address_one_line(tmp_path, zoo):
    zoo("llama-spm")
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    out = tmp_path / "out"
    started = time.monotonic()
    done = tokparity_cli("llama-spm", "-c", "edge", "-b", "ref", "-o", str(out), "--ray", address)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tokparity: error: --ray {address}: no Ray cluster answers")
    assert time.monotonic() - started < 30  # not Ray's own minutes of retrying
    assert (out / JOURNAL_FILE).is_file()


def test_auto_with_no_cluster_there_one_line(tmp_path, zoo):
    zoo("llama-spm")
    address = f"127.0.0.1:{free_port()}"  # $RAY_ADDRESS names it; nothing listens there
    done = tokparity_cli("llama-spm", "-c", "edge", "-b", "ref", "-o", str(tmp_path / "out"), "--ray", "auto",
                         ray_address=address)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    # (Ray resolves $RAY_ADDRESS's 127.0.0.1 to this machine's own address: the port says it is ours)
    assert line.startswith("tokparity: error: --ray auto: no Ray cluster answers at ")
    assert f":{address.rsplit(':', 1)[1]} (" in line


def test_a_journal_naming_a_cluster_someone_else_wrote_is_not_followed(tmp_path, zoo):
    """The driver unpickles what a cluster's actors send: a journal whose --ray address this
    user's tokparity did not sign is refused on resume (one line, exit 2), before any connection."""
    zoo("llama-spm")
    out = tmp_path / "out"
    mine = f"127.0.0.1:{free_port()}"
    assert tokparity_cli("llama-spm", "-c", "edge", "-b", "ref", "-o", str(out), "--ray", mine).returncode == 2
    lines = (out / JOURNAL_FILE).read_bytes().split(b"\n")
    header = json.loads(lines[0])
    assert header["args"]["ray"] == mine and header["signature"]  # our own run's address: signed
    hostile = f"127.0.0.1:{free_port()}"
    header["args"]["ray"] = hostile  # edited by someone else: the signature no longer holds
    (out / JOURNAL_FILE).write_bytes(b"\n".join([json.dumps(header).encode()] + lines[1:]))
    done = tokparity_cli("--resume", str(out), "-q")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "not written by your tokparity" in line and f'"--ray {hostile}"' in line and "--trust-journal" in line


# -- regress --ray ----------------------------------------------------------------------------------

# Against the goldens: the reference (no change), hf-gguf (changes the built-in known list
# explains, so the known counts of the Ray tasks are merged too) and the greedy engine (changes).
REGRESS = ["llama-spm", "botchan-unigram", "-b", "ref", "-b", "hf-gguf", "-b", GREEDY, "-q"]


@pytest.fixture(scope="module")
def goldens(tmp_path_factory, zoo) -> Path:
    zoo("llama-spm")
    zoo("botchan-unigram")
    folder = tmp_path_factory.mktemp("goldens")
    done = tokparity_cli("--update", "llama-spm", "botchan-unigram", "-c", "edge", "--goldens", str(folder), "-q",
                         command="regress")
    assert done.returncode == 0, done.stderr
    return folder


def changed_lines(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.startswith("CHANGED")]


def test_regress_on_ray_gives_the_reports_of_one_process(tmp_path, cluster, goldens):
    one = tokparity_cli(*REGRESS, "--goldens", str(goldens), "-o", str(tmp_path / "one"), command="regress",
                        timeout=600)
    on_ray = tokparity_cli(*REGRESS, "--goldens", str(goldens), "-o", str(tmp_path / "ray"), "--ray", "auto",
                           command="regress", timeout=600, ray_address=cluster)  # auto: $RAY_ADDRESS, as ray.init
    assert one.returncode == on_ray.returncode == 1, on_ray.stderr  # the greedy engine's changes
    assert on_ray.stderr == ""
    assert summary_without_timing(tmp_path / "ray") == summary_without_timing(tmp_path / "one")
    assert csv_rows(tmp_path / "ray") == csv_rows(tmp_path / "one")
    assert len(changed_lines(on_ray)) == 40 and changed_lines(on_ray) == changed_lines(one)
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text("utf-8"))
    assert {"hf-gguf-metaspace-leading-space", "hf-gguf-unigram-t5-unk-id"} <= set(summary["known"]["used"])
    assert [(r["model"], r["backend"]) for r in summary["runs"]] == [
        (model, backend) for model in ("llama-spm", "botchan-unigram") for backend in ("ref", "hf-gguf", "greedy")]
    assert summary["timing"]["jobs"] == 2  # a task per model, on both nodes


def test_regress_without_ray_installed_one_line(tmp_path, goldens):
    blocker = tmp_path / "noray"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['ray'] = None  # import ray: ImportError\n")
    done = tokparity_cli("llama-spm", "--goldens", str(goldens), "-b", "ref", "-o", str(tmp_path / "out"), "--ray",
                         extra_path=str(blocker), command="regress")
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["tokparity: error: --ray needs Ray: pip install 'tokparity[ray]'"]
