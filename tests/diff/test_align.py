"""align()'s shortcuts (common head and tail left out of difflib, no difflib when the middles
share nothing or differ only by substitutions of tokens the other side lacks) against plain
difflib, which stays the specification."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from tokparity.diff.align import align

ids = st.lists(st.integers(0, 6), max_size=14)


def _rebuild(a, b, opcodes):
    out = []
    for tag, i1, i2, j1, j2 in opcodes:
        assert tag in ("equal", "replace", "delete", "insert")
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
            out += a[i1:i2]
        else:
            out += b[j1:j2]
    return out


@settings(max_examples=400, deadline=None)
@given(ids, ids)
def test_opcodes_rebuild_b_and_locate_the_first_difference(a, b):
    d = align(a, b)
    assert _rebuild(a, b, d.opcodes) == b
    assert d.equal == (a == b)
    if not d.equal:
        head = next(i for i in range(len(a) + 1) if i == len(a) or i == len(b) or a[i] != b[i])
        assert d.first == (head, head)  # the first differing position, exactly


@settings(max_examples=400, deadline=None)
@given(ids, ids)
def test_without_a_common_head_or_tail_it_is_difflib(a, b):
    if a and b and (a[0] == b[0] or a[-1] == b[-1]):
        return
    plain = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[1:] != (0, 0, 0, 0)]
    assert align(a, b).opcodes == plain


def test_one_swapped_token_is_one_replace():
    d = align([6, 82920, 6, 82920], [6, 2, 6, 82920])
    assert d.opcodes == [("equal", 0, 1, 0, 1), ("replace", 1, 2, 1, 2), ("equal", 2, 4, 2, 4)]
    assert (d.first, d.last) == ((1, 1), (2, 2))


# A place of two runs: the same token on both sides (0-3), or a substitution of a token the other
# run never holds (10-12 against 20-22: an <unk> written as another id).
places = st.lists(st.one_of(st.integers(0, 3).map(lambda t: (t, t)),
                            st.tuples(st.integers(10, 12), st.integers(20, 22))), max_size=40)


@settings(max_examples=600, deadline=None)
@given(places)
def test_substitutions_of_tokens_the_other_side_lacks_are_difflib(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    plain = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[1:] != (0, 0, 0, 0)]
    assert align(a, b).opcodes == plain


ends = st.lists(st.integers(100, 103), max_size=3)


@settings(max_examples=300, deadline=None)
@given(ends, ends, st.lists(st.integers(0, 3), min_size=1, max_size=30), ends, ends)
def test_long_runs_with_changed_ends_are_aligned_as_difflib_does(head_a, tail_a, middle, head_b, tail_b):
    """Past DIFFLIB_MOST, two runs equal but for their ends are aligned without difflib (a seventh
    hostile campaign's 100,000-character case with a BOS and an EOS added took 76 s). Here the bound
    is lowered so that small runs take that way. Where the ends hold no token of the middle, the
    opcodes are difflib's (the ends' tokens may be shared: [1, 9, 7] against [2, 9, 8])."""
    import tokparity.diff.align as module

    a, b = head_a + middle + tail_a, head_b + middle + tail_b
    if a[0] == b[0] or a[-1] == b[-1]:  # (a common head or tail is taken off first, as above)
        return
    plain = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[1:] != (0, 0, 0, 0)]
    most = module.DIFFLIB_MOST
    module.DIFFLIB_MOST = 0
    try:
        assert align(a, b).opcodes == plain
    finally:
        module.DIFFLIB_MOST = most


def test_a_long_case_with_a_bos_and_an_eos_added_is_aligned_at_once():
    middle = [i % 97 for i in range(40_000)]
    d = align(middle, [1, *middle, 2])
    assert d.opcodes == [("insert", 0, 0, 0, 1), ("equal", 0, 40_000, 1, 40_001), ("insert", 40_000, 40_000, 40_001, 40_002)]
