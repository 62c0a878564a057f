"""A run's answers never depend on the machine's load: the same run on a quiet machine and beside
a CPU hog writes the same reports.

The run is the deepest chat search the suite asks: an engine written blind with five bugs, three of
them in how the text is written, so each mismatch is searched up to three ways at once. The
search's budget is counted in characters (tokparity.diagnose.chat.SEARCH_CHARS). The budget it
had was 10 s; this search now takes about 0.3 s, so that budget would pass here too. Set near the
search's cost (0.3 s), a budget in seconds made this test fail: mismatches.csv and summary.json
differed beside the hog. The test guards against any answer that follows the clock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tokparity.cli import main
from tools import same_outputs

BLIND = Path(__file__).parents[1] / "engines" / "blind" / "chat_blind.py"
BUGS = ("double-bos", "text-specials", "drop-final-newline", "no-generation-prompt", "trim-ignored")


def _compare(out: Path) -> int:
    engine = f"cmd:{sys.executable} {BLIND} {{tokenizer_json}}" + "".join(f" --bug {b}" for b in BUGS)
    return main(["compare", "gemma-3", "-c", "chats", "--ops", "chat", "-b", "hf", "-b", f"eng={engine}",
                 "-o", str(out), "-q"])


def test_a_busy_machine_writes_the_same_reports(zoo, tmp_path):
    zoo("gemma-3")
    assert _compare(tmp_path / "quiet" / "run") == 1
    # One hog per core (two at least) keeps every core busy. More would only slow the tests beside
    # this one. Each hog stops when its parent does, so a test process killed midway leaves none.
    hog = f"import os\nwhile os.getppid() == {os.getpid()}: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(max(2, os.cpu_count() or 1))]
    try:
        assert _compare(tmp_path / "busy" / "run") == 1
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert same_outputs.main([str(tmp_path / "quiet"), str(tmp_path / "busy"), "run"]) == 0
