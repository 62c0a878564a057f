"""Finds of the eleventh hostile campaign and of the tenth's open items, each as a user meets it.

``--junit`` and ``convert -o`` wrote a temporary file under a name anyone could guess
(``.NAME.PID.tmp``), through a link planted there: a corpus or the journal key was overwritten.
With the key made the GGUF of a public tokenizer.json, a forged journal ran its command on
``--resume``. Signals other than the seven handled ones (SIGXCPU, SIGPROF, SIGPWR, the real-time
ones…) ended tokparity with a hung ``cmd:`` engine left running. An ``--oracle`` that failed on
every case, its crashes a known divergence, gave ✅. ``--junit`` replaced an engine's file named
through a shell's words no finder follows, a saved dataset's ``state.json``, and a journal key
the run was about to make.

``fuzz --ops chat`` stopped by Ctrl-C exited 0: its reports said nothing of the stop, and a CI
step passed. Stopped while its backends started, it wrote no reports at all (the tenth campaign's
open item). It now writes them and exits 130, as compare does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import processes
import pytest
from cli_runs import ROOT, one_error, tokparity

# A py: engine that says where it is (a file) and then blocks: in its start, or on its third conversation.
BLOCKING = '''import json, time
from pathlib import Path

HERE = Path(__file__).parent


class Engine:
    def __init__(self, files):
        self.n = 0
        if WHERE == "start":
            (HERE / "blocked").write_text("start")
            time.sleep(120)

    def encode(self, text, add_special, parse_special):
        return []

    def chat(self, messages, tools, options):
        self.n += 1
        if self.n == 3:
            (HERE / "blocked").write_text("chat")
            time.sleep(60)
        return {"text": "<|im_start|>user\\n"}
'''


@pytest.mark.parametrize("where", ["start", "chat"])
def test_fuzz_chat_stopped_by_ctrl_c_writes_its_reports_and_exits_130(tmp_path: Path, zoo, where: str):
    zoo("qwen3")
    (tmp_path / "engine.py").write_text(f"WHERE = {where!r}\n" + BLOCKING, encoding="utf-8")
    run = subprocess.Popen([sys.executable, "-P", "-m", "tokparity", "fuzz", "qwen3", "--ops", "chat", "-b",
                            f"slow=py:{tmp_path / 'engine.py'}:Engine", "-o", "out", "--seconds", "900"],
                           cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 600
        while not (tmp_path / "blocked").exists():
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.2)
        run.send_signal(signal.SIGINT)
        stdout, stderr = run.communicate(timeout=300)  # (a busy machine: the engine's call ends on its own)
    finally:
        run.kill()
    assert run.returncode == 130, (stdout, stderr)
    assert "tokparity: interrupted after" in stderr and "Traceback" not in stderr, stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    # (on its third call the engine may be shrinking the first finding: that conversation is not counted yet)
    done = summary["options"]["fuzz"]["cases"]
    assert f"interrupted after {done} conversation" in stderr and (done == 0 or where == "chat"), (done, stderr)
    assert (tmp_path / "out" / "report.html").exists()


HANG = """import sys, time, signal
for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(s, signal.SIG_IGN)
sys.stdin.readline()
open(sys.argv[1], "w").close()
while True:
    time.sleep(1000)
"""
FAIL = """import sys, json
for line in sys.stdin:
    print(json.dumps({"id": json.loads(line)["id"], "error": "boom"}), flush=True)
"""
KNOWN = """[[divergence]]
id = "all-crashes"
models = ["*"]
backends = ["*"]
classes = ["crash", "timeout"]
reason = "reviewed: every crash"
upstream = "nowhere"
"""


def links_at_the_next_temporary_names(folder: Path, name: str, suffix: str, victim: Path) -> None:
    """What a repository can hold: a link for each of the next process ids, where tokparity once wrote."""
    folder.mkdir(exist_ok=True)
    for pid in range(os.getpid(), os.getpid() + 3000):
        (folder / f".{name}.{pid}.{suffix}").symlink_to(victim)


def test_no_output_is_written_through_a_link_at_a_temporary_name(tmp_path: Path, zoo):
    zoo("llama-spm")
    victim = tmp_path / "texts.txt"
    victim.write_text("hello world\n", "utf-8")
    links_at_the_next_temporary_names(tmp_path / "rep", "j.xml", "tmp", victim)
    done = tokparity("compare", "llama-spm", "-c", "texts.txt", "-b", "ref", "--junit", "rep/j.xml", "-o", "o", "-q",
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert victim.read_text("utf-8") == "hello world\n" and not (tmp_path / "rep" / "j.xml").is_symlink()
    links_at_the_next_temporary_names(tmp_path / "build", "q.gguf", "partial", victim)
    model = zoo("llama-bpe").files["tokenizer_json"]
    done = tokparity("convert", str(model), "--to", "gguf", "-o", "build/q.gguf", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert victim.read_text("utf-8") == "hello world\n"


def test_a_journal_key_tokparity_did_not_make_is_refused(tmp_path: Path, zoo):
    """A key replaced by other bytes (a GGUF anyone can make) would sign anyone's journal. A run
    whose journal names a command needs the key."""
    zoo("llama-bpe")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "journal-key").write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(200))
    engine = f"mine=cmd:{sys.executable} {ROOT / 'examples' / 'engines' / 'template_engine.py'} {{tokenizer_json}}"
    line = one_error(tokparity("compare", "llama-bpe", "-c", "edge", "-b", engine, "-o", "o", "-q", cwd=tmp_path,
                               env={"TOKPARITY_CACHE": str(cache)}))
    assert "journal-key: this is not a journal key tokparity made" in line


@pytest.mark.parametrize("signum", [getattr(signal, name) for name in ("SIGXCPU", "SIGPROF", "SIGPWR", "SIGRTMIN")
                                    if hasattr(signal, name)])
def test_every_signal_that_ends_tokparity_ends_a_hung_engine(tmp_path: Path, zoo, signum: int):
    zoo("llama-spm")
    (tmp_path / "hang.py").write_text(HANG, "utf-8")
    asked = tmp_path / "asked"
    run = subprocess.Popen([sys.executable, "-P", "-m", "tokparity", "compare", "llama-spm", "-c", "edge", "-b",
                            f"hang=cmd:{sys.executable} {tmp_path / 'hang.py'} {asked}", "--timeout", "100",
                            "-o", "out", "-q"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 300
        while not asked.exists():
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.2)
        run.send_signal(signum)
        _, stderr = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 128 + signum, stderr
    assert (tmp_path / "out" / "report.html").exists()
    time.sleep(1)
    assert not processes.ours(str(tmp_path / "hang.py")), "the hung engine outlived the run"


def test_an_oracle_that_fails_on_every_case_is_nothing_compared(tmp_path: Path, zoo):
    zoo("llama-spm")
    (tmp_path / "fail.py").write_text(FAIL, "utf-8")
    (tmp_path / "k.toml").write_text(KNOWN, "utf-8")
    (tmp_path / "texts.txt").write_text("hello world\nanother line\n", "utf-8")
    line = one_error(tokparity("compare", "llama-spm", "-c", "texts.txt", "--oracle",
                               f"bad=cmd:{sys.executable} {tmp_path / 'fail.py'}", "--known", "k.toml", "-o", "o",
                               "-q", cwd=tmp_path))
    assert "nothing was compared: every case was a crash or a timeout, of the engine or of the oracle" in line
    assert "✅" not in (tmp_path / "o" / "summary.md").read_text("utf-8").splitlines()[0]


def test_a_ci_file_onto_a_cache_file_not_made_yet_is_refused(tmp_path: Path, zoo):
    zoo("llama-spm")
    cache = tmp_path / "fresh"
    cache.mkdir()
    (tmp_path / "ci").symlink_to(cache)
    env = {"TOKPARITY_CACHE": str(cache)}
    run = ("compare", "llama-spm", "-c", "edge", "-b", "ref", "-o", "o", "-q")
    line = one_error(tokparity(*run, "--junit", "ci/journal-key", cwd=tmp_path, env=env))
    assert "ci/journal-key: is a file of tokparity's cache" in line
    line = one_error(tokparity(*run, cwd=tmp_path, env={**env, "GITHUB_STEP_SUMMARY": str(tmp_path / "ci/journal-key")}))
    assert "journal-key: is a file of tokparity's cache" in line
    assert not (cache / "journal-key").exists()


def test_junit_replaces_only_a_junit_report(tmp_path: Path, zoo):
    """An engine's program named through ``${D:-dir}``, which no finder of the command's files reads."""
    zoo("llama-spm")
    engine = tmp_path / "e" / "eng.py"
    engine.parent.mkdir()
    engine.write_text((ROOT / "examples" / "engines" / "template_engine.py").read_text("utf-8"), "utf-8")
    before = engine.read_bytes()
    spec = f"mine=cmd:sh -c \"{sys.executable} ${{D:-{engine.parent}}}/eng.py $TOKPARITY_TOKENIZER_JSON\""
    run = ("compare", "llama-bpe", "-c", "edge", "-b", spec, "-o", "o", "-q")
    zoo("llama-bpe")
    line = one_error(tokparity(*run, "--junit", str(engine), cwd=tmp_path))
    assert "is a file that holds no JUnit report" in line and engine.read_bytes() == before
    done = tokparity(*run, "--junit", "j.xml", cwd=tmp_path)  # (a JUnit report is replaced, run after run)
    assert done.returncode in (0, 1), done.stderr
    done = tokparity(*run, "--junit", "j.xml", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr


def test_a_ci_file_onto_a_saved_datasets_description_is_refused(tmp_path: Path, zoo):
    """state.json and dataset_dict.json say where a saved dataset's rows are: the run reads them."""
    datasets = pytest.importorskip("datasets")
    zoo("llama-spm")
    datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": ["hello world", "more text"]})}) \
        .save_to_disk(str(tmp_path / "dd"))
    state = tmp_path / "dd" / "train" / "state.json"
    before = state.read_bytes()
    run = ("compare", "llama-spm", "-c", "dd", "-b", "ref", "-o", "o", "-q")
    line = one_error(tokparity(*run, "--junit", "dd/dataset_dict.json", cwd=tmp_path))
    assert "--junit dd/dataset_dict.json: is -c dd/dataset_dict.json; the run would overwrite it" in line
    line = one_error(tokparity(*run, cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(state)}))
    assert f"$GITHUB_STEP_SUMMARY {state}: is -c {Path('dd') / 'train' / 'state.json'}; the run would append" in line
    assert state.read_bytes() == before
    # a report folder inside the corpus folder is not a corpus file: a second run into it goes on
    for _ in range(2):
        done = tokparity("compare", "llama-spm", "-c", "dd", "-b", "ref", "-o", "dd/out", "-q", cwd=tmp_path)
        assert done.returncode == 0, done.stderr


def test_the_step_summary_is_appended_only_to_a_markdown_file(tmp_path: Path, zoo):
    """An engine's module or program named through words no finder reads (``${D:-dir}``, ``env``)."""
    zoo("llama-bpe")
    engine = tmp_path / "e" / "eng.py"
    engine.parent.mkdir()
    engine.write_text((ROOT / "examples" / "engines" / "template_engine.py").read_text("utf-8"), "utf-8")
    program = tmp_path / "bin" / "engx"
    program.parent.mkdir()
    program.write_text(f"#!{sys.executable}\n" + engine.read_text("utf-8"), "utf-8")
    program.chmod(0o755)
    before = engine.read_bytes(), program.read_bytes()
    spec = f"mine=cmd:sh -c \"{sys.executable} ${{D:-{engine.parent}}}/eng.py $TOKPARITY_TOKENIZER_JSON\""
    run = ("compare", "llama-bpe", "-c", "edge", "-b", spec, "-o", "o", "-q")
    line = one_error(tokparity(*run, cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(engine)}))
    assert "is a .py file; a step summary is a Markdown file" in line
    line = one_error(tokparity(*run, cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(program)}))
    assert "is a program; a step summary is a Markdown file" in line
    assert (engine.read_bytes(), program.read_bytes()) == before
    summary = tmp_path / "step_summary_1f2e"  # (a runner's own file: no suffix)
    summary.write_text("## an earlier step\n", "utf-8")
    done = tokparity(*run, cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode in (0, 1), done.stderr
    assert summary.read_text("utf-8").startswith("## an earlier step\n# tokparity")


@pytest.mark.parametrize("name", ["special_tokens_map.json", "added_tokens.json"])
def test_a_hard_link_only_transformers_reads_is_refused(tmp_path: Path, zoo, name: str):
    """tokparity reads neither file itself; transformers does, by name: the secret's access time moved."""
    qwen3 = zoo("qwen3")
    model = tmp_path / "model"
    model.mkdir()
    for role in ("tokenizer_json", "tokenizer_config"):
        if role in qwen3.files:
            (model / qwen3.files[role].name).write_bytes(qwen3.files[role].read_bytes())
    secret = tmp_path / "secret.json"
    secret.write_text('{"eos_token": "SEKRIT"}', "utf-8")
    os.link(secret, model / name)
    line = one_error(tokparity("compare", "model", "-c", "edge", "-b", "ref", "-o", "o", "-q", cwd=tmp_path))
    assert f"{name}: is a hard link (2 names for one file)" in line
    (model / name).rename(model / "blob")  # (a link inside the folder to a hard link: the file it names is judged)
    (model / name).symlink_to("blob")
    line = one_error(tokparity("compare", "model", "-c", "edge", "-b", "ref", "-o", "o", "-q", cwd=tmp_path))
    assert "is a hard link (2 names for one file)" in line


def test_a_saved_datasets_description_linked_out_of_its_folder_is_refused(tmp_path: Path, zoo):
    datasets = pytest.importorskip("datasets")
    zoo("llama-spm")
    datasets.Dataset.from_dict({"text": ["hello world"]}).save_to_disk(str(tmp_path / "ds"))
    outside = tmp_path / "elsewhere.json"
    (tmp_path / "ds" / "state.json").rename(outside)
    (tmp_path / "ds" / "state.json").symlink_to(outside)
    line = one_error(tokparity("compare", "llama-spm", "-c", "ds", "-b", "ref", "-o", "o", "-q", cwd=tmp_path))
    assert "state.json: is a link to" in line and "outside its folder" in line
