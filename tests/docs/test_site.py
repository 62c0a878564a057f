"""The documentation site builds with ``mkdocs build --strict``, and strict really fails.

CI runs only the test suite (.ci/run), so the site is built here rather than only in
``nox -s docs``: mkdocs is in the test extra. A build into a temporary folder takes a few
seconds. The failing builds run on a copy of docs/ (the package's sources linked beside it,
which the generating hook reads) with one thing broken: a link and an anchor, a bug class that the
catalogue's real cases no longer cover, a generated block edited by hand.

The generated blocks are committed, so that the Markdown files read whole where they are not
built (on GitHub). The committed blocks must be what the package's files say now.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=root, capture_output=True, text=True, timeout=180, env=env)


def copy_of_the_docs(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    for name in ("tokparity", "examples", ".github"):
        (root / name).symlink_to(ROOT / name)
    return root


def text_of(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text("utf-8")))


def test_site_builds_strict_with_every_class_and_cause(tmp_path):
    done = mkdocs_build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    classes = text_of(tmp_path / "site" / "catalogue" / "classes" / "index.html")
    for name in tomllib.loads((ROOT / "tokparity" / "diff" / "classes.toml").read_text("utf-8")):
        assert name in classes, f"the bug-class page lacks {name}"
    causes = text_of(tmp_path / "site" / "catalogue" / "causes" / "index.html")
    for name, entry in tomllib.loads((ROOT / "tokparity" / "diagnose" / "causes.toml").read_text("utf-8")).items():
        assert name in causes and entry["fix"].replace("`", "") in causes, f"the cause page lacks {name} or its fix"
    known = tomllib.loads((ROOT / "tokparity" / "known_divergences.toml").read_text("utf-8"))["divergence"]
    for entry in known:
        assert entry["id"] in classes, f"the bug-class page does not list the known divergence {entry['id']}"
    contracts = text_of(tmp_path / "site" / "contracts" / "index.html")
    assert "TOKPARITY_TOKENIZER_CONFIG" in contracts and "cause_evidence" in contracts
    spm = text_of(tmp_path / "site" / "reference" / "spm" / "index.html")
    assert "From the docstring of tokparity/reference/spm.py" in spm and "priority queue" in spm
    for page in (tmp_path / "site").rglob("*.html"):  # token names in prose are text, not HTML tags
        raw = re.search(r"<(unk|0x[0-9A-Fa-f]{2}|0xNN|/s)>", page.read_text("utf-8"))
        assert raw is None, f"{page.relative_to(tmp_path)} holds a raw {raw.group(0)} (escape it)"
    ci = text_of(tmp_path / "site" / "guides" / "ci" / "index.html")
    assert "actions/upload-artifact" in ci and "junit: reports/parity/junit.xml" in ci  # the files, included


def test_strict_build_fails_on_a_broken_link_or_anchor(tmp_path):
    root = copy_of_the_docs(tmp_path)
    with open(root / "docs" / "about.md", "a", encoding="utf-8") as f:
        f.write("\nSee [gone](gone.md) and [the CI page](guides/ci.md#no-such-heading).\n")
    done = mkdocs_build(root, tmp_path / "site")
    assert done.returncode != 0
    assert "'gone.md'" in done.stderr and "#no-such-heading" in done.stderr, done.stderr[-3000:]


def test_strict_build_fails_when_the_catalogue_drifts_from_the_code(tmp_path):
    root = copy_of_the_docs(tmp_path)
    cases = root / "docs" / "_hooks" / "catalogue.toml"
    text = cases.read_text("utf-8")
    assert "\nmerge-order = " in text
    cases.write_text(re.sub(r"\nmerge-order = .*\n", "\n", text), encoding="utf-8")
    done = mkdocs_build(root, tmp_path / "site")
    assert done.returncode != 0
    assert "class 'merge-order' (tokparity/diff/classes.toml) has no real case" in done.stderr, done.stderr[-3000:]


def test_the_committed_blocks_are_what_the_files_say_now():
    sys.path.insert(0, str(ROOT / "docs" / "_hooks"))
    try:
        import generate
    finally:
        sys.path.remove(str(ROOT / "docs" / "_hooks"))
    stale = [str(page.relative_to(ROOT)) for page in generate.pages()
             if generate.expand(page.read_text("utf-8")) != page.read_text("utf-8")]
    assert not stale, f"stale generated blocks in {stale}: run python docs/_hooks/generate.py"
    assert "| `{tokenizer_json}` | `TOKPARITY_TOKENIZER_JSON` |" in (ROOT / "docs" / "contracts.md").read_text("utf-8")


def test_strict_build_fails_on_a_generated_block_edited_by_hand(tmp_path):
    root = copy_of_the_docs(tmp_path)
    page = root / "docs" / "contracts.md"
    text = page.read_text("utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `{tokenizer_json}`"))
    page.write_text(text.replace(row + "\n", ""), encoding="utf-8")
    done = mkdocs_build(root, tmp_path / "site")
    assert done.returncode != 0
    assert "docs/contracts.md: a generated block is stale; run python docs/_hooks/generate.py" in done.stderr, \
        done.stderr[-3000:]
