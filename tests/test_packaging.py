"""The installed package holds every data file the source tree has (TOML tables, report templates).

The tests import tokparity from the source tree (pytest puts the checkout first on the path), so a
data file missing from ``[tool.setuptools.package-data]`` passes every other test and breaks the
installed ``tokparity`` command: ``causes.toml`` once did exactly that. This test reads the
installed distribution's file list instead.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parent.parent / "tokparity"


def _editable() -> bool:
    text = metadata.distribution("tokparity").read_text("direct_url.json") or "{}"
    return bool(json.loads(text).get("dir_info", {}).get("editable"))


def test_every_data_file_is_installed():
    if _editable():
        pytest.skip("TOKPARITY IS INSTALLED EDITABLE: the installed file list cannot be checked; run the README's "
                    "test command (nox -s tests installs it as a user does)")
    installed = {str(f).replace("\\", "/") for f in metadata.files("tokparity") or []}
    data = sorted(str(p.relative_to(SOURCE.parent)).replace("\\", "/") for p in SOURCE.rglob("*")
                  if p.is_file() and p.suffix in (".toml", ".html", ".css", ".js", ".txt"))
    assert data, "no data files found in the source tree"
    missing = [f for f in data if f not in installed]
    assert not missing, f"not installed (add them to [tool.setuptools.package-data]): {missing}"


def test_the_all_extra_holds_what_fuzz_needs():
    """`pip install '.[all]'` installs Hypothesis: without it `tokparity fuzz` runs its generators
    only (and says so), while the README promises "generated and Hypothesis texts"."""
    requires = metadata.requires("tokparity") or []
    assert any(r.startswith("hypothesis") and 'extra == "fuzz"' in r for r in requires), requires
    assert any(r.startswith("tokparity[") and "fuzz" in r and 'extra == "all"' in r for r in requires), requires
