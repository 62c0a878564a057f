"""The `bpe` crate's backtracking encoder, written blind (tests/engines/blind/byte_bpe.py
``--backtracking``: its author ported the crate's source, github/rust-gems ``crates/bpe``, from a
bug description, and read no diagnosis code, nor tokparity/reference/backtracking.py, which was
written from quicktok-v1's port of the same crate). tests/diagnose/mutation.py says how each check reads.

On Llama 3's vocabulary (ranks = ids, 588 tokens past cl100k's that no merge makes) the encoder takes
``' každ'`` whole: ``' každou'`` is [103870, 283] where the merges give [16909, 12453, 114541]; five texts
of the multilingual corpus differ. Named ``model.backtracking``, proven, every agreement kept; the
twin (no flag) agrees."""

from __future__ import annotations

import pytest
from mutation import Mutation, check_single, compare_runs, engine

BYTE_BPE = ("blind/byte_bpe.py", "{tokenizer_json}")
BACKTRACKING = Mutation("model.backtracking", "llama-bpe", engine(*BYTE_BPE, "--backtracking"), engine(*BYTE_BPE),
                        ("multilingual", "edge"), at_least=5)


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([BACKTRACKING], tmp_path_factory.mktemp("corpora"), zoo)


def test_backtracking_encoder(runs):
    run = runs[BACKTRACKING.group]
    check_single(run, BACKTRACKING)
    root = run.summary(BACKTRACKING.bug).root_cause
    assert root.variants == ("model.backtracking",) and root.proven, root
    row = next(x for x in run.mismatches(BACKTRACKING.bug) if "každou" in x.text)
    assert _holds(row.oracle_ids, [16909, 12453, 114541]) and _holds(row.backend_ids, [103870, 283]), row


def _holds(ids, part: list[int]) -> bool:
    ids = list(ids)
    return any(ids[i:i + len(part)] == part for i in range(len(ids)))
