"""What a tenth hostile campaign broke (2026-11-30, a helper told only the promises of
docs/robustness.md), each as a user runs it:

- a ``cmd:`` engine's file named through a shell variable in ``sh -c`` (``$HOME/eng.py``, a variable
  the script sets first) was overwritten by ``--junit`` or ``$GITHUB_STEP_SUMMARY``;
- a ``py:`` engine's exception whose ``__str__`` raises broke tokparity's own child: its
  traceback stood in every case's evidence;
- a short ``fuzz --ops chat`` whose one conversation the template rightly refuses was told to fix
  the template.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from cli_runs import one_error, tokparity

ROOT = Path(__file__).resolve().parents[2]
ENGINE = (ROOT / "examples" / "engines" / "template_engine.py").read_text("utf-8")


def test_an_engine_named_through_a_shell_variable_is_never_written(tmp_path, zoo):
    zoo("llama-bpe")
    home = tmp_path / "home"
    home.mkdir()
    engine = home / "eng.py"
    engine.write_text(ENGINE, "utf-8")
    scripts = {"home": f'sh -c "{sys.executable} $HOME/eng.py \\"$TOKPARITY_TOKENIZER_JSON\\""',
               "braces": f'sh -c "{sys.executable} ${{HOME}}/eng.py \\"$TOKPARITY_TOKENIZER_JSON\\""',
               "set first": f'bash -c "D={home}; {sys.executable} $D/eng.py \\"$TOKPARITY_TOKENIZER_JSON\\""'}
    for name, script in scripts.items():
        line = one_error(tokparity("compare", "llama-bpe", "-c", "edge", "--sample", "3", "-b", f"e=cmd:{script}",
                                   "--junit", str(engine), "-o", "out", "-q", cwd=tmp_path, env={"HOME": str(home)}))
        assert f"--junit {engine}: is -b {engine}" in line, name
        line = one_error(tokparity("compare", "llama-bpe", "-c", "edge", "--sample", "3", "-b", f"e=cmd:{script}",
                                   "-o", "out", "-q", cwd=tmp_path,
                                   env={"HOME": str(home), "GITHUB_STEP_SUMMARY": str(engine)}))
        assert f"$GITHUB_STEP_SUMMARY {engine}: is -b {engine}" in line, name
        assert engine.read_text("utf-8") == ENGINE, name


BAD_STR = '''
class Odd(Exception):
    def __str__(self):
        raise RuntimeError("no words")


class Engine:
    def __init__(self, files):
        pass

    def encode(self, text, add_special, parse_special):
        raise Odd()
'''


def test_an_exception_that_cannot_say_itself_is_one_case_failure(tmp_path, zoo):
    zoo("llama-bpe")
    (tmp_path / "odd.py").write_text(BAD_STR, "utf-8")
    done = tokparity("compare", "llama-bpe", "-c", "edge", "--sample", "5", "-b", "ref", "-b",
                     f"e=py:{tmp_path / 'odd.py'}:Engine", "-o", "out", "-q", "--no-diagnose", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    with open(tmp_path / "out" / "mismatches.csv", encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["backend"] == "e"]
    assert len(rows) == 5 and all(r["class"] == "crash" for r in rows)
    assert all("Odd: (its message could not be read" in r["evidence"] and "Traceback" not in r["evidence"]
               and "^^^" not in r["evidence"] for r in rows), rows[0]["evidence"]


def test_a_short_fuzz_whose_few_conversations_were_refused_is_not_told_to_fix_the_template(tmp_path):
    """A 4-second ``fuzz --ops chat`` drew one conversation, which Qwen3's template rightly refuses:
    nothing was compared, and the words told the user to fix a good template."""
    import pytest

    from tokparity.chat import SPECIALS_CHECK
    from tokparity.commands.nothing_compared import refuse_silent_templates
    from tokparity.errors import TokparityError
    from tokparity.run.results import Results, RunSummary

    def refusal(skipped: int) -> str:
        good = RunSummary("gemma-3", "hf", SPECIALS_CHECK, cases=35, skipped=0, op="chat")  # (another model's: fine)
        results = Results("0.1.0", runs=[good, RunSummary("qwen3", "hf", "hf", cases=skipped, op="chat"),
                                         RunSummary("qwen3", "hf", SPECIALS_CHECK, cases=0, skipped=skipped, op="chat")])
        with pytest.raises(TokparityError) as raised:
            refuse_silent_templates(results, tmp_path)
        return str(raised.value)

    assert "none of the 1 conversations (it raised on each" in refusal(1)
    assert ": try more conversations (more --seconds, a larger corpus), or fix the template;" in refusal(1)
    assert ": fix the template;" in refusal(35)
