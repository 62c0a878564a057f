"""The run-level verdict's candidates (tokparity.diagnose.verdict.candidates) weigh the per-case
sets tied at their cut by breadth, and only so many of them: each breadth costs a footprint of
every probe text, and an engine whose every case has a set of its own ties them all."""

from tokparity.diagnose.verdict import CANDIDATES, TIES_WEIGHED, candidates
from tokparity.records import Diagnosis


def _one_case_each(sets):
    return [(None, Diagnosis("cause", "evidence", variants=keys)) for keys in sets]


def test_the_narrowest_of_a_few_tied_sets_is_taken():
    sets = [(f"variant.{i}",) for i in range(CANDIDATES + 2)]
    weighed = []

    def breadth(keys):
        weighed.append(keys)
        return 0 if keys == sets[-1] else 1

    got = candidates(_one_case_each(sets), breadth)
    assert weighed == sets  # every tied set, once
    assert got[:CANDIDATES] == [sets[-1], *sets[:CANDIDATES - 1]]


def test_only_the_first_tied_sets_are_weighed_the_smallest_first():
    sets = [(f"variant.{i}",) for i in range(200)]
    weighed = []

    def breadth(keys):
        weighed.append(keys)
        return 0 if keys in (sets[7], sets[150]) else 1

    got = candidates(_one_case_each(sets), breadth)
    assert weighed == sets[:TIES_WEIGHED]
    assert got[0] == sets[7] and sets[150] not in got

    pairs = [(f"variant.{i}", f"other.{i}") for i in range(100)]  # the same, after 100 sets of two variants
    weighed.clear()
    candidates(_one_case_each(pairs + sets), breadth)
    assert weighed == sets[:TIES_WEIGHED]
