"""What an engine does to the text before its tokenizer sees it, and to special-token text with
parsing off, on an engine written blind (tests/engines/blind/wrapped_lib.py: its author had the bug
descriptions only, never the diagnosis code). The engine wraps the real libraries, SentencePiece
(``--spm``, mistral-v1) and tokenizers (``--hf``, llama-bpe); with no flag it is the library itself
(the twin, 0 mismatches). tests/diagnose/mutation.py says how each check reads.

* ``--c-string``: the text handed over as a NUL-terminated string, everything from the first NUL lost
  (``'a\\x00b'`` is ``'a'``): ``input.cut``.
* ``--strip-leading``: ``text.lstrip()`` first: ``input.strip``.
* ``--whitespace-raw``: a blank text looked up whole (spaces as the vocabulary's mark), else
  ``<unk>`` (nothing on Llama 3, which has none): ``input.whitespace-piece``.
* ``--segment-specials``: with parsing off, the text still cut at ``<s>``, ``</s>``, ``<unk>`` and
  every part tokenized apart (each with its own dummy prefix): ``specials.segmented``.
* All four at once: the run's verdict names the four (``focus:c-strings`` gives the NUL cases
  enough weight: one NUL text among 2,400 is below the verdict's noise floor).
"""

from __future__ import annotations

import pytest
from mutation import SHARE, Mutation, check_single, check_twin, compare_runs, engine, param

SPM = ("blind/wrapped_lib.py", "--spm", "{spm_model}")
HF = ("blind/wrapped_lib.py", "--hf", "{tokenizer_json}")
SPM_CORPORA = ("edge", "seams", "focus:c-strings")
HF_CORPORA = ("edge", "focus:c-strings")

SINGLES = [
    param(Mutation("input.cut", "mistral-v1", engine(*SPM, "--c-string"), engine(*SPM), SPM_CORPORA), "c-string-spm"),
    param(Mutation("input.strip", "mistral-v1", engine(*SPM, "--strip-leading"), engine(*SPM), SPM_CORPORA),
          "strip-spm"),
    param(Mutation("input.whitespace-piece", "mistral-v1", engine(*SPM, "--whitespace-raw"), engine(*SPM),
                   SPM_CORPORA), "blank-spm"),
    param(Mutation("specials.segmented", "mistral-v1", engine(*SPM, "--segment-specials"), engine(*SPM),
                   SPM_CORPORA), "segmented-spm"),
    param(Mutation("input.cut", "llama-bpe", engine(*HF, "--c-string"), engine(*HF), HF_CORPORA), "c-string-hf"),
    param(Mutation("input.whitespace-piece", "llama-bpe", engine(*HF, "--whitespace-raw"), engine(*HF), HF_CORPORA),
          "blank-hf"),
]
ALL_FOUR = Mutation("input.cut+input.strip+input.whitespace-piece+specials.segmented", "mistral-v1",
                    engine(*SPM, "--c-string", "--strip-leading", "--whitespace-raw", "--segment-specials"),
                    engine(*SPM), SPM_CORPORA)


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([p.values[0] for p in SINGLES] + [ALL_FOUR], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m", SINGLES)
def test_one_input_bug(runs, m):
    check_single(runs[m.group], m)


def test_all_four(runs):
    """Every cause in the verdict, proven on all the mismatches and agreements; each row names bugs
    of the engine (no text shows all four: a blank text has no NUL or special text left to cut)."""
    run, parts = runs[ALL_FOUR.group], set(ALL_FOUR.cause.split("+"))
    check_twin(run, ALL_FOUR)
    mismatches = run.mismatches(ALL_FOUR.bug)
    within = sum(bool(x.cause) and set(x.cause.split("+")) <= parts for x in mismatches)
    assert within >= SHARE * len(mismatches), f"{within} of {len(mismatches)}"
    assert {x.cause for x in mismatches} >= {"input.cut", "input.strip", "input.whitespace-piece",
                                             "specials.segmented", "input.strip+input.whitespace-piece"}
    root = run.summary(ALL_FOUR.bug).root_cause
    assert root is not None and root.cause == ALL_FOUR.cause and root.proven, root
    assert root.explains >= SHARE * len(mismatches) and root.keeps == root.agreements, root
