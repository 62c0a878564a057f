"""The hostile-input campaign (``tools.robustness.campaign``) judges what it claims to judge:
a marked process left running is found, a traceback or a second error line is caught, a file
the run must not write is watched, and a sample of its trials from every family holds. The whole campaign is ``nox -s robustness``."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tools.robustness import campaign as c


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, zoo) -> c.Workspace:
    zoo("llama-spm")
    zoo("llama-bpe")
    ws = c.Workspace(tmp_path_factory.mktemp("campaign"))
    ws.write("engine.py", c.ENGINE)
    return ws


def test_a_process_carrying_the_mark_is_found_until_it_is_gone():
    token = "test-" + os.urandom(4).hex()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             env={**os.environ, c.MARK: token}, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while child.pid not in c.marked_processes(token) and time.monotonic() < deadline:
            time.sleep(0.05)  # (its environment is readable once exec has run)
        assert c.marked_processes(token) == [child.pid]
    finally:
        child.kill()
        child.wait()
    assert c.marked_processes(token) == []


def test_only_one_tokparity_error_line_is_a_clear_refusal():
    assert c._one_clear_line("tokparity: error: corp.jsonl:3: invalid JSON; fix the line\n")
    assert not c._one_clear_line("usage: tokparity compare …\ntokparity compare: error: argument -j\n")
    assert not c._one_clear_line("Traceback (most recent call last):\n  File …\nValueError: x\n")


def test_a_traceback_and_an_orphan_are_judged_bad(workspace):
    """tokparity broken on purpose (a sitecustomize makes `compare` divide by zero after starting an
    engine that outlives it): the campaign must call it bad, naming both."""
    workspace.write("breaker/sitecustomize.py",
                    "import subprocess, sys\n"
                    "import tokparity.commands.compare as m\n"
                    "def run(args):\n"
                    "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], start_new_session=True)\n"
                    "    return 1 / 0\n"
                    "m.run = run\n"
                    "import tokparity.backends.orphans as orphans\n"  # (and its end no longer stops what it adopted)
                    "orphans.stop_adopted = lambda: []\n")
    path = os.pathsep.join(filter(None, [str(workspace.root / "breaker"), os.environ.get("PYTHONPATH")]))
    broken = c.Trial("arguments", "broken", [c.Step(["compare", "llama-spm", "-b", "ref", "-o", "out", "-q"])],
                     env={"PYTHONPATH": path})
    verdict = c.judge(broken, workspace)
    kinds = {p.split(":")[0] for p in verdict.problems}
    assert verdict.kind == c.BAD and kinds == {"traceback", "orphan"}, verdict.problems


SAMPLE = {
    "engines": ["cmd-fork-exit", "cmd-fork-orphan", "cmd-not-json", "cmd-crash-decode", "py-floats",
                "hostile-model-name-sh"],
    "corpora": ["lone-surrogate-text", "deep-nesting", "bom"],
    "journals": ["record-n-wrong-2", "duplicated-record"],
    "arguments": ["timeout-inf", "jobs-huge", "fuzz-seconds-nan"],
    "signals": ["SIGTERM-hang-after-3-j1", "SIGHUP-looping-template"],
    "models": ["catastrophic-split-ref", "replace-chain-hf"],
    "outputs": ["symlink-summary.json", "junit-is-the-corpus"],
    "writers": ["two-compares-one-folder"],
    "bombs": ["gz-line", "gz-line-max-chars", "goldens-line"],
    "explain": ["summary-deep", "csv-ids-deep"],
    "environment": ["cache-loop", "step-summary-fifo", "known-fifo"],
    "folder": ["modules-chat", "modules-jobs", "modules-fuzz-chat", "modules-regress-update", "link-chat_template.jinja",
               "output-onto-junit-config",
               "resume-after-the-template-changed"],
    "goldens": ["oracle-cmd", "encoder-py"],
    "empty": ["template-raises"],
}


@pytest.mark.parametrize("family", sorted(SAMPLE))
def test_a_sample_of_every_family_holds(workspace, family):
    trials = {t.name: t for t in c.FAMILIES[family](workspace)}
    for name in SAMPLE[family]:
        verdict = c.judge(trials[name], workspace)
        assert verdict.kind == c.HELD, (name, verdict.problems, verdict.stderr[-500:])
        c._clean(workspace, trials[name])


def test_a_file_the_run_must_not_write_is_watched(workspace, zoo):
    """A trial whose step writes a file it names as untouched (``convert -o`` onto it, which
    converts as asked) is judged bad, ``clobbered``; the same trial watching another file holds."""
    target = workspace.write("watched.model", "precious\n")
    step = c.Step(["convert", str(zoo("llama-spm").path("gguf")), "--to", "spm", "-o", str(target)],
                  statuses=c.OK_STATUSES)
    verdict = c.judge(c.Trial("outputs", "written", [step], untouched=["watched.model"]), workspace)
    assert verdict.problems == ["clobbered: watched.model was changed by the run"]
    workspace.write("other.txt", "x")
    assert c.judge(c.Trial("outputs", "not-written", [step], untouched=["other.txt"]), workspace).kind == c.HELD


def test_a_planted_program_that_ran_and_a_published_secret_are_judged_bad(workspace):
    """A trial whose engine leaves a planted mark and writes the trial's secret into its error (which
    the reports show) is judged bad, ``ran`` and ``published``; a trial that watches another mark and
    holds no secret holds."""
    workspace.write("leaky.py", "import json, os, sys\n"
                                f"open({str(workspace.root / 'marks' / 'LEAKY')!r}, 'w').close()\n"
                                "for line in sys.stdin:\n"
                                "    req = json.loads(line)\n"
                                "    print(json.dumps({'id': req['id'], 'error': os.environ['CAMPAIGN_SECRET']}), "
                                "flush=True)\n")
    (workspace.root / "marks").mkdir(exist_ok=True)
    corpus = workspace.write("corpora/leaky.jsonl", "\n".join(c.corpus_lines(3)) + "\n")
    step = c.Step(c.compare("-c", str(corpus), "-b", f"cmd:{sys.executable} {workspace.root / 'leaky.py'}"),
                  statuses=c.OK_STATUSES)
    verdict = c.judge(c.Trial("folder", "leaky", [step], out="out", never=["marks/LEAKY"], secret="s3cr3t-campaign"),
                      workspace)
    kinds = {p.split(":")[0] for p in verdict.problems}
    assert verdict.kind == c.BAD and kinds == {"ran", "published"}, verdict.problems
    c._clean(workspace, c.Trial("folder", "leaky", [step]))
    quiet = c.Step(c.compare("-c", str(corpus), "-b", "ref"), statuses=c.OK_STATUSES)
    assert c.judge(c.Trial("folder", "quiet", [quiet], out="out", never=["marks/OTHER"], secret="s3cr3t-campaign"),
                   workspace).kind == c.HELD
