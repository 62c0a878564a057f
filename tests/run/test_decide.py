"""``decide``: the one place a row's class, stage, cause and known divergence are settled, from its
Judgement and its Diagnosis (tokparity.run.decide). Hand-made records of a greedy engine on
llama-spm ("It's raining." as '▁rain' 'ing' where the oracle says '▁ra' 'ining')."""

from __future__ import annotations

from dataclasses import replace

from tokparity.records import TIE, Diagnosis, Judgement, RootCause
from tokparity.run.decide import decide
from tokparity.run.known import KnownList, parse_known

# The rules' symptom here is one a greedy match cannot show (normalization): the proof corrects it.
RAINING = Judgement("llama-spm", "multilingual", "en-0004", {}, "llama.cpp", "greedy", "normalization", "ev",
                    "unknown", 3, "It's raining.", [739, 29915, 29879, 1153, 2827, 29889],
                    [739, 29915, 29879, 17251, 292, 29889], ["▁It", "'", "s", "▁ra", "ining", "."],
                    ["▁It", "'", "s", "▁rain", "ing", "."])
GREEDY = Diagnosis("model.greedy-longest-match", "the reference reproduces the backend's ids exactly",
                   ("model.greedy-longest-match",), decides_class=True, stage="model")


def known(toml: str) -> KnownList:
    return KnownList(parse_known(toml, "k.toml"))


def test_a_proof_sets_a_class_the_cause_has_and_the_stage_the_judge_could_not():
    decision = decide(RAINING, GREEDY, None, None)
    # normalization is not a symptom of a greedy match; merge-order, its first, is
    assert (decision.cls, decision.stage, decision.cause) == ("merge-order", "model", "model.greedy-longest-match")
    assert decision.unexplained and not decision.tie


def test_a_stage_level_cause_locates_but_keeps_the_symptom():
    located = Diagnosis("pretokenizer.other", "the pre-tokenizers differ", decides_class=False, stage="pre_tokenize")
    decision = decide(RAINING, located, None, None)
    assert (decision.cls, decision.stage, decision.cause) == ("normalization", "pre_tokenize", "pretokenizer.other")


def test_nothing_diagnosed_keeps_what_the_judge_saw():
    decision = decide(RAINING, None, None, None)
    assert (decision.cls, decision.stage, decision.cause, decision.known) == ("normalization", "unknown", "", "")


def test_a_tie_is_reported_apart_unless_known():
    tie = Diagnosis(TIE, "equal scores", decides_class=True, stage="model")
    assert decide(RAINING, tie, None, None).tie
    entry = known('[[divergence]]\nid = "ties"\nmodels = ["llama-spm"]\nbackends = ["greedy"]\n'
                  'classes = ["viterbi-tie"]\nreason = "r"\nupstream = "u"\n')
    decision = decide(RAINING, tie, None, entry)
    assert decision.known == "ties" and not decision.tie and not decision.unexplained


def test_the_known_list_matches_the_decided_class_and_counts_one_hit():
    entries = known('[[divergence]]\nid = "greedy-merge"\nmodels = ["llama-spm"]\nbackends = ["greedy"]\n'
                    'classes = ["merge-order"]\nreason = "r"\nupstream = "u"\n')
    assert decide(RAINING, None, None, entries).known == ""  # as judged: normalization
    assert decide(RAINING, GREEDY, None, entries).known == "greedy-merge"  # as decided: merge-order
    assert entries.report()["used"] == {"greedy-merge": 1}


def test_a_known_divergence_nothing_reproduces_carries_its_reviewed_cause():
    entries = known('[[divergence]]\nid = "crashes"\nmodels = ["llama-spm"]\nbackends = ["greedy"]\n'
                    'classes = ["normalization"]\ncause = "space.escape"\nreason = "r"\nupstream = "issue 1"\n')
    decision = decide(RAINING, Diagnosis("", "nothing reproduces it"), None, entries)
    assert decision.cause == "space.escape"
    assert decision.cause_evidence == "reviewed, not reproduced: the known divergence 'crashes' says so (issue 1)"


# The run's root cause of an engine with two bugs: greedy matching and no dummy prefix.
PROVEN = RootCause("space.dummy-prefix+model.greedy-longest-match", ("space.dummy-prefix", "model.greedy-longest-match"),
                   100, 100, 500, 500, True)
NOT_PROVEN = RootCause(PROVEN.cause, PROVEN.variants, 50, 100, 400, 500, False)


def test_a_part_of_the_root_cause_that_reproduces_the_case_is_its_cause():
    """One engine, one cause: the case's own reading (merges by score) gives way to the part of the
    run's root cause that gives its ids too, and the evidence says so."""
    by_score = Diagnosis("model.merge-by-score", "by score", ("model.merge-by-score",), decides_class=True,
                         stage="model", verdict_parts=(("model.greedy-longest-match",),))
    decision = decide(RAINING, by_score, PROVEN, None)
    assert (decision.cause, decision.variants) == ("model.greedy-longest-match", ("model.greedy-longest-match",))
    assert decision.cause_evidence.startswith("the run's root cause reproduces these ids exactly")
    assert decide(RAINING, by_score, None, None).cause == "model.merge-by-score"  # no verdict: its own


def test_a_larger_part_only_from_a_proven_root_cause():
    """A case whose symptom (merge-order) both parts can show: the pair is taken over its own
    single reading only when the verdict is proven."""
    both = (("space.dummy-prefix", "model.greedy-longest-match"),)
    by_score = Diagnosis("model.merge-by-score", "by score", ("model.merge-by-score",), decides_class=True,
                         stage="model", verdict_parts=both)
    merge_order = replace(RAINING, cls="merge-order")
    assert decide(merge_order, by_score, NOT_PROVEN, None).cause == "model.merge-by-score"
    assert decide(merge_order, by_score, PROVEN, None).cause == "space.dummy-prefix+model.greedy-longest-match"
    # a part whose causes the class is no symptom of, in another stage than the case's own: not taken
    assert decide(RAINING, by_score, PROVEN, None).cause == "model.merge-by-score"


def test_a_tie_the_proven_root_cause_reproduces_is_that_cause():
    tie = Diagnosis(TIE, "equal scores", decides_class=True, stage="model",
                    verdict_parts=(("model.greedy-longest-match",),))
    assert decide(RAINING, tie, NOT_PROVEN, None).tie
    decision = decide(RAINING, tie, PROVEN, None)
    assert decision.cause == "model.greedy-longest-match" and not decision.tie
    assert "not a tie" in decision.cause_evidence


def test_a_crash_fitting_a_buffer_is_claimed_only_by_a_verdict():
    """``decode.fails-past-buffer`` on one crash: any failure on a long text fits some buffer. A fuzz
    finding has no verdict, so the row claims no cause; a proven verdict that holds it names it."""
    crash = replace(RAINING, op="decode", cls="crash", backend_ids=[])
    past = Diagnosis("decode.fails-past-buffer", "fails", ("decode.fails-past-buffer",), decides_class=False)
    assert decide(crash, past, None, None).cause == ""
    verdict = RootCause("decode.ids-alone+decode.fails-past-buffer", ("decode.ids-alone", "decode.fails-past-buffer"),
                        10, 10, 5, 5, True)
    assert decide(crash, past, verdict, None).cause == "decode.fails-past-buffer"
    invalid = Diagnosis("decode.fails-on-invalid-bytes", "fails", ("decode.fails-on-invalid-bytes",), decides_class=False)
    assert decide(crash, invalid, None, None).cause == "decode.fails-on-invalid-bytes"
