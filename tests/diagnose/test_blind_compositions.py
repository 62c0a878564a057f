"""Compositions of three deviations, on engines written blind (tests/engines/blind/README.md: their
author had the bug descriptions only, never the diagnosis code). tests/diagnose/mutation.py says how
each check reads.

* ``spm_greedy.py --no-escape --no-prefix`` on llama-spm: the Gemma 3 write-up's engine as it really
  was, on a model whose file asks for the dummy prefix: greedy longest match over the normal pieces,
  spaces never escaped (each one the byte piece ``<0x20>``), no dummy prefix. Three causes, all
  named by the run-level verdict (until the search composed sets of any size, the rows said
  ``whitespace.other`` and the verdict lacked ``space.escape``).
* ``byte_bpe.py --digits-unbounded --unicode-3.2 --always-parse-special`` on llama-bpe: a byte-level
  BPE whose split keeps a whole run of digits together (``\\p{N}+`` for ``\\p{N}{1,3}``), reads the
  split's classes from Unicode 3.2 tables, and parses special-token text always: three causes,
  ``pretokenizer.digits``, ``unicode.tables`` (3.2's) and ``specials.parse``, all in the verdict
  (until the catalogue had the first two, the rows said ``pretokenizer.other``). The focused corpus
  ``unicode-32`` holds the seams whose class 3.2 reads otherwise and Python's tables (the twin's)
  read as llama.cpp does; ``llama3-mixed`` texts with all three at once.
"""

from __future__ import annotations

import pytest
from mutation import Mutation, check_composition, compare_runs, engine

SPM_GREEDY = ("blind/spm_greedy.py", "{gguf}")
BYTE_BPE = ("blind/byte_bpe.py", "{tokenizer_json}")

WRITE_UP_LLAMA_SPM = Mutation("space.dummy-prefix+space.escape+model.greedy-longest-match", "llama-spm",
                              engine(*SPM_GREEDY, "--no-escape", "--no-prefix"),
                              engine("llamacpp_engine.py", "{gguf}"), ("multilingual", "edge"))
THREE_BPE_BUGS = Mutation("pretokenizer.digits+specials.parse+unicode.tables", "llama-bpe",
                          engine(*BYTE_BPE, "--digits-unbounded", "--unicode-3.2", "--always-parse-special"),
                          engine(*BYTE_BPE), ("multilingual", "edge", "focus:unicode-32", "focus:llama3-mixed"))


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([WRITE_UP_LLAMA_SPM, THREE_BPE_BUGS], tmp_path_factory.mktemp("corpora"), zoo)


def test_greedy_unescaped_no_prefix_llama_spm(runs):
    """All three deviations named, the verdict proven on every mismatch; a case without a space
    shows only the missing prefix and is named by that alone (the smallest set)."""
    check_composition(runs[WRITE_UP_LLAMA_SPM.group], WRITE_UP_LLAMA_SPM)


def test_three_bpe_bugs_llama_bpe(runs):
    """The true causes, from the engine's own flags: the digit run taken whole ("12345" one
    pre-token), U+200B (a space in 3.2) and scripts added since read by Unicode 3.2's categories,
    special-token text parsed with parse_special off."""
    check_composition(runs[THREE_BPE_BUGS.group], THREE_BPE_BUGS)
