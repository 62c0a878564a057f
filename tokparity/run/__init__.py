"""The run layer: how one case goes from the corpora to a row of the reports. pipeline.py calls
the steps in this order; no step imports another.

    judge.py     ModelRun.judge        answers ──► CaseRecord (a Verdict per backend, a Judgement per mismatch)
    tally.py     Tally.apply           cases, skips, tag rates counted; each Judgement kept in case order
    (tokparity.diagnose.model)         a Diagnosis per Judgement, a RootCause per backend
    decide.py    decide                Judgement + Diagnosis + RootCause + known list ──► Decision
    tally.py     Tally.count           each Mismatch counted once ──► RunSummary rows, Mismatch rows
    (tokparity.report)                 the rows rendered

Where cases are judged is driver.py's choice: in this process, in ``--jobs`` worker processes
(parallel.py) or on Ray actors (cluster.py); the records always come back to one ``Tally`` per
model, in case order (ledger.ModelLedger, for every transport), and to one journal (journal/,
what ``--resume`` replays). What the workers and actors send: messages.py. What a run is asked:
options.py; the reviewed known divergences: known.py; who judges a model's cases: oracle.py;
what a run produces: results.py (tokparity.records holds the records themselves).
"""
