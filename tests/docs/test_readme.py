"""The README stays true: short, its commands real, its engine example giving what it says.

The README is what a new user reads first, so every command in it is checked here: the test
command is the one CI runs (.ci/run), every ``tokparity`` command parses with the real command
line, and the two example runs (the template engine, the greedy engine of the report picture) are
run for real, in a subprocess, with the outcome the README states. Its links into docs/ must name
files (and headings) that exist.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 120  # what a user reads in five minutes; the rest lives in docs/
TEMPLATE = ROOT / "examples" / "engines" / "template_engine.py"


def readme() -> str:
    return README.read_text("utf-8")


def fenced_blocks(markdown: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", markdown, flags=re.MULTILINE | re.DOTALL)


def shell_commands(markdown: str) -> list[str]:
    """The command lines of the ```bash blocks (comments and blank lines left out)."""
    return [line.strip() for block in fenced_blocks(markdown, "bash") for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def section(markdown: str, heading: str) -> str:
    start = markdown.index(f"\n## {heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start:end if end >= 0 else None]


def tokparity_commands(markdown: str) -> list[list[str]]:
    out = []
    for line in shell_commands(markdown):
        line = line.split(" #")[0]  # a trailing comment
        if line.startswith("tokparity "):
            out.append(shlex.split(line))
    return out


def run(argv: list[str], timeout: float = 180) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "tokparity", *argv], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def the_command(markdown: str, *words: str) -> list[str]:
    """The one README command that holds all these words."""
    found = [argv for argv in tokparity_commands(markdown) if all(w in " ".join(argv) for w in words)]
    assert len(found) == 1, f"expected one README command with {words}, found {found}"
    return found[0]


def without_out(argv: list[str]) -> list[str]:
    """The command with its -o DIR removed (the test writes elsewhere)."""
    out = list(argv)
    if "-o" in out:
        i = out.index("-o")
        del out[i:i + 2]
    return out


def runs_by_backend(out: Path) -> dict[str, dict]:
    return {r["backend"]: r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"]}


def one_line(text: str) -> str:
    return " ".join(text.split())


# -- length and the quick start ----------------------------------------------------------------------


def test_readme_is_at_most_120_lines():
    n = len(readme().splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines; keep it at most {MAX_LINES} and move the rest to docs/"


def test_quick_start_test_command_is_exactly_what_ci_runs():
    commands = shell_commands(section(readme(), "Quick start"))
    assert len(commands) == 4, f"the quick start should hold the main job, the tests and the engine check: {commands}"
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
          if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert ci == [commands[1]], f".ci/run runs {ci}, the README's test command is {commands[1]!r}"
    assert commands[0].endswith("python3 -m nox -s parity") and commands[1].endswith("python3 -m nox -s tests")
    assert commands[2] == "python3 -m pip install '.[all]'"  # the engine check: the template, green
    assert commands[3] == shlex.join(the_command(readme(), "template_engine.py", "compare"))
    noxfile = (ROOT / "noxfile.py").read_text("utf-8")
    for session in ("parity", "tests"):
        assert re.search(rf"^def {session}\(session", noxfile, re.MULTILINE), f"noxfile.py has no {session} session"
    assert '"-o", "reports/parity"' in noxfile, "the quick start says nox -s parity writes reports/parity/"


def test_every_tokparity_command_of_the_readme_parses():
    commands = tokparity_commands(readme())
    assert len(commands) >= 2
    parser = build_parser()
    for argv in commands:
        try:
            parser.parse_args(argv[1:])
        except SystemExit as e:  # argparse exits on a bad command line
            pytest.fail(f"README command does not parse (exit {e.code}): {shlex.join(argv)}")


def test_every_tokparity_command_of_the_docs_parses():
    parser = build_parser()
    pages = sorted((ROOT / "docs").rglob("*.md"))
    seen = 0
    for page in pages:
        for argv in tokparity_commands(page.read_text("utf-8")):
            seen += 1
            try:
                parser.parse_args(argv[1:])
            except SystemExit as e:
                pytest.fail(f"{page.relative_to(ROOT)}: command does not parse (exit {e.code}): {shlex.join(argv)}")
    assert seen >= 10, f"only {seen} tokparity commands found in docs/"


# -- the engine: template, protocol, placeholders ---------------------------------------------------


def test_the_readme_template_is_the_example_file():
    blocks = fenced_blocks(readme(), "python")
    assert blocks, "the README shows no engine template"
    assert blocks[0] == TEMPLATE.read_text("utf-8"), \
        "the README's engine template differs from examples/engines/template_engine.py; keep them the same"


def test_readme_sends_the_reader_to_the_guide_that_lists_every_placeholder():
    """The README names one placeholder; the engine guide's table, generated from FILE_ROLES,
    names them all with their variables."""
    assert "[engine guide](docs/guides/your-engine.md)" in readme() and "`{tokenizer_json}`" in readme()
    guide = (ROOT / "docs" / "guides" / "your-engine.md").read_text("utf-8")
    assert "<!-- generate: placeholders -->" in guide


def test_template_engine_agrees_as_the_readme_says(tmp_path):
    argv = the_command(readme(), "template_engine.py", "compare")
    assert "-b" in argv and any(a.startswith("mine=cmd:") for a in argv), "the example names its engine mine"
    done = run([*argv[1:], "-o", str(tmp_path / "r"), "-q"])
    assert done.returncode == 0, done.stderr
    mine = runs_by_backend(tmp_path / "r")["mine"]
    assert (mine["cases"], mine["mismatches"], mine["unexplained"]) == (884 + 1518, 7, 0)
    assert mine["causes"] == {"unicode.tables": 7} and mine["root_cause"]["explains"] == 7
    # (the guide promises the row says the difference is tokenizers': the write-up says it, not only the CSV)
    explained = " ".join(run(["explain", str(tmp_path / "r")]).stdout.split())
    assert ("No fix needed. Its 7 cases are the reviewed known divergence llama-cpp-unicode-tables-before-16. "
            "hf gives these ids too, on the same file.") in explained
    assert ("`mine` agrees with the oracle on all 884 cases of the `edge` corpus. It differs on 7 of the 1,518 "
            "texts of `seams`, the Unicode and regex-engine seams, and still passes (exit 0). On those 7, "
            "`tokenizers` (which the template runs) gives the same ids on the same file.") in one_line(readme())


def test_template_engine_with_add_special_differs_as_the_readme_says(tmp_path):
    argv = the_command(readme(), "template_engine.py", "compare")
    done = run([*argv[1:], "--add-special", "-o", str(tmp_path / "r"), "-q"])
    assert done.returncode == 1, done.stderr
    mine = runs_by_backend(tmp_path / "r")["mine"]
    # (on the 7 of the seams tokenizers gives the same ids on the same file: its known difference)
    assert (mine["cases"], mine["mismatches"], mine["unexplained"]) == (2402, 2402, 2395)
    assert mine["classes"] == {"bos-eos": 2395, "unicode-categories": 7}
    assert mine["causes"] == {"bos": 2395, "bos+unicode.tables": 7}
    assert ("With `--add-special`, every one of the 2,402 cases differs and the run exits 1. That `tokenizer.json` "
            "adds no `<|begin_of_text|>`, and llama.cpp, the oracle, does. So 2,395 rows read class `bos-eos`, cause "
            "`bos`. The 7 seams read class `unicode-categories`, cause `bos+unicode.tables`.") in one_line(readme())


def test_greedy_engine_report_example_gives_what_the_readme_says(tmp_path):
    argv = the_command(readme(), "greedy_engine.py")
    done = run([*without_out(argv)[1:], "-o", str(tmp_path / "r"), "-q"])
    assert done.returncode == 1, done.stderr
    greedy = runs_by_backend(tmp_path / "r")["greedy"]
    root = greedy["root_cause"]
    assert (greedy["cases"], greedy["mismatches"]) == (884, 181)
    assert (root["cause"], root["explains"], root["keeps"], root["agreements"]) == \
        ("model.greedy-longest-match", 181, 703, 703)
    assert ("`greedy` differs on 181 of 884 cases, and the root cause `model.greedy-longest-match` "
            "reproduces all 181 and keeps all 703 agreements") in one_line(readme())
    assert (tmp_path / "r" / "report.html").is_file()


# -- links -------------------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc (MkDocs) and GitHub give a heading, for the headings we write."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text("utf-8"), flags=re.MULTILINE | re.DOTALL)
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}


def test_readme_links_name_files_and_headings_that_exist():
    links = re.findall(r"\]\(([^)\s]+)\)", readme())
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert any(link.startswith("docs/") for link in local), "the README links to no docs page"
    for link in local:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), f"README links to {link}: {path} does not exist"
        if anchor:
            assert anchor in anchors(target), f"README links to {link}: {path} has no heading #{anchor}"


def test_readme_picture_is_a_committed_png():
    text = readme()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images == ["docs/images/report.png"]
    assert (ROOT / images[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
