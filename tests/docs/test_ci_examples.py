"""The CI examples: this repository's GitHub workflow and the GitLab job of docs/ci/.

Each is validated against its CI system's published schema with check-jsonschema (its vendored
copies of SchemaStore's ``github-workflows`` and ``gitlab-ci`` schemas: no network). actionlint
would check more (expressions, shell), but its PyPI wrapper downloads the binary from GitHub when
it installs, which these machines cannot reach. Beyond the schema: both run ``nox -s parity``, keep
the folder that session writes and hand the CI system the JUnit file tokparity writes there, and
the step that fails the job does so exactly when summary.json holds an unexplained mismatch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "parity.yml"
GITLAB = ROOT / "docs" / "ci" / "gitlab-ci.yml"
SCHEMAS = {WORKFLOW: "vendor.github-workflows", GITLAB: "vendor.gitlab-ci"}
JUNIT = "reports/parity/junit.xml"


def lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", SCHEMAS[path], str(path)],
                          capture_output=True, text=True, timeout=120)


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text("utf-8"))


@pytest.mark.parametrize("path", [WORKFLOW, GITLAB], ids=["github", "gitlab"])
def test_ci_example_is_valid_for_its_ci_system(path):
    done = lint(path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("path", [WORKFLOW, GITLAB], ids=["github", "gitlab"])
def test_the_linter_rejects_a_broken_copy(path, tmp_path):
    """The check can fail: a misspelled key makes each file invalid for its schema."""
    broken = tmp_path / path.name
    text = path.read_text("utf-8")
    wrong = text.replace("runs-on:", "run-on:") if path == WORKFLOW else text.replace("artifacts:", "artifact:")
    assert wrong != text
    broken.write_text(wrong, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", SCHEMAS[path], str(broken)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr


def workflow_steps() -> list[dict]:
    return load(WORKFLOW)["jobs"]["parity"]["steps"]


def test_workflow_runs_parity_keeps_the_report_and_reads_the_junit_file():
    steps = workflow_steps()
    runs = [s.get("run", "") for s in steps]
    assert f"python -m nox -s parity -- --junit {JUNIT}" in runs
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "reports/parity/" and upload["if"] == "always()"
    junit = next(s for s in steps if s.get("uses", "").startswith("mikepenz/action-junit-report@"))
    assert junit["with"]["report_paths"] == JUNIT
    assert '"-o", "reports/parity"' in (ROOT / "noxfile.py").read_text("utf-8"), "nox -s parity writes elsewhere"


def test_gitlab_job_runs_parity_and_keeps_report_and_junit():
    job = load(GITLAB)["parity"]
    assert f"python -m nox -s parity -- --junit {JUNIT}" in job["script"]
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["paths"] == ["reports/parity/"]
    assert job["artifacts"]["reports"]["junit"] == JUNIT


def fail_steps() -> list[str]:
    github = next(s["run"] for s in workflow_steps() if s.get("name") == "fail on an unexplained mismatch")
    gitlab = load(GITLAB)["parity"]["script"][-1]
    return [github, gitlab]


@pytest.mark.parametrize("unexplained, status", [(0, 0), (3, 1)], ids=["clean", "unexplained"])
def test_the_failing_step_fails_exactly_on_an_unexplained_mismatch(tmp_path, unexplained, status):
    (tmp_path / "reports" / "parity").mkdir(parents=True)
    runs = [{"model": "llama-spm", "backend": "ref", "unexplained": 0},
            {"model": "llama-spm", "backend": "mine", "unexplained": unexplained}]
    (tmp_path / "reports" / "parity" / "summary.json").write_text(json.dumps({"runs": runs}), encoding="utf-8")
    for script in fail_steps():
        # Both CI systems run a step's script with bash; python is the runner's interpreter.
        done = subprocess.run(["bash", "-c", script.replace("python -c", f"{sys.executable} -c", 1)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == status, script + "\n" + done.stdout + done.stderr
