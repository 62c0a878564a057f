"""A journal line written from its parts (``record_line``, for the cases where every backend
agrees) is the very text ``json_text(record_json(…))`` gives: a resume, ``tools.same_outputs``
and any reader of ``cases.jsonl`` see no difference."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tokparity.corpus import numbered_cases
from tokparity.records import AGREE, NOT_APPLICABLE, SKIPPED, CaseRecord, Verdict
from tokparity.run.journal.format import record_json, record_line
from tokparity.run.results import json_text

# Any text, lone surrogates included (a corpus line may hold them: JSON escapes them, and so must a line).
TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)
PLAIN_VERDICTS = st.sampled_from([AGREE, SKIPPED, NOT_APPLICABLE])


def written(record: CaseRecord, slot: int | None) -> str:
    return json_text(record_json(record, True, slot))


@settings(max_examples=400, deadline=None)
@given(model=TEXT, n=st.integers(0, 2**62), case_id=TEXT, corpus=TEXT, oracle=TEXT,
       tally=st.lists(TEXT, max_size=5).map(tuple), slot=st.none() | st.integers(0, 500),
       verdicts=st.dictionaries(TEXT, PLAIN_VERDICTS, max_size=5),
       op=st.sampled_from(["encode", "decode", "stream", "pieces", "chat"]))
def test_an_agreeing_case_line_is_json_texts(model, n, case_id, corpus, oracle, tally, slot, verdicts, op):
    record = CaseRecord(model, n, case_id, corpus, oracle, tally, verdicts, op=op)
    line = record_line(record, True, slot)
    assert line == written(record, slot)
    assert json.loads(line)["verdicts"] == {name: verdict.kind for name, verdict in verdicts.items()}


def test_every_built_in_case_line_is_json_texts():
    """The built-in corpora's ids and rate keys (control characters, quotes, emoji), as a run
    writes them, with the default run's three kinds of verdict and with none."""
    records = [CaseRecord("llama-spm", n, case.id, case.corpus, "llama.cpp", case.rate_keys,
                          [{"ref": AGREE, "sentencepiece": AGREE, "hf-gguf": AGREE}, {"golden": SKIPPED, "ref": AGREE},
                           {"mine": NOT_APPLICABLE}, {}][n % 4])
               for n, case in numbered_cases(["all"], None)]
    assert len(records) > 7000
    different = [r.case_id for r in records if record_line(r, True, r.n % 3 or None) != written(r, r.n % 3 or None)]
    assert different == []


def test_other_records_are_written_whole():
    """A mismatch's verdict, a case too long, a fuzz record's causes, a decoding op's case: the
    line is ``record_json``'s, whether written whole or from its parts."""
    others = [CaseRecord("m", 1, "c", "x", "hf", ("corpus=x",), {"b": Verdict.differs("space-prefix", "k1")}),
              CaseRecord("m", 2, "c2", "x", too_long=5000),
              CaseRecord("m", 3, "c3", "x", "hf", ("corpus=x",), {"b": Verdict.differs("crash")}, causes={"b": "bos"}),
              CaseRecord("m", 4, "c4", "x", "hf", ("corpus=x",), {"b": AGREE}, op="decode")]
    for record in others:
        assert record_line(record, True, 0) == written(record, 0)
    assert '"verdicts": {"b": ["space-prefix", "k1"]}' in record_line(others[0])


def test_a_backend_side_that_is_the_oracles_is_written_once():
    """A decoding op judges the oracle's own ids: the line leaves the backend's ids and pieces out,
    and a reader gets them back. Where they differ (an encoding), both are written."""
    from tokparity.records import Judgement
    from tokparity.run.journal.format import read_record

    def judged(op: str, backend_ids: list[int], backend_pieces: list[str]) -> CaseRecord:
        j = Judgement("m", "x", "c", {}, "hf", "b", "decode-text", "why", op, 0, "text", [5, 6], backend_ids,
                      ["▁a", "b"], backend_pieces, op=op, oracle_output=["a b"], backend_output=["ab"])
        return CaseRecord("m", 1, "c", "x", "hf", ("corpus=x",), {"b": Verdict.differs("decode-text")}, (j,), op=op)

    same, other = judged("decode", [5, 6], ["▁a", "b"]), judged("encode", [5, 7], ["▁a", "c"])
    line = json.loads(record_line(same))
    assert "backend_ids" not in line["mismatches"][0] and "backend_pieces" not in line["mismatches"][0]
    assert read_record(line).judgements == same.judgements
    line = json.loads(record_line(other))
    assert line["mismatches"][0]["backend_ids"] == [5, 7] and line["mismatches"][0]["backend_pieces"] == ["▁a", "c"]
    assert read_record(line).judgements == other.judgements
