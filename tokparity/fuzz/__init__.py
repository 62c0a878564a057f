"""``fuzz``: generated texts against every backend until the time is up; each distinct root cause
found is a finding, shrunk to a minimal text.

For one model the run is:

    unicode-seams (first, to its end)
    then the generators, steered ──► cases ──► judged, diagnosed ──► a (backend, cause) not seen?
    then Hypothesis ───────────────┘               │                          │ yes
                                                    ▼                          ▼
                                 ledger: counted, the first      shrink: the smallest text on which
                                 cases of each cause stored      that backend still shows that cause
                                                                 ──► a finding: fuzz-findings.jsonl
    at the end: each backend's verdict, weighed on cases kept at random ──► each finding named again

    generators.py  the seeded generators (every vocabulary piece, code point, …); seams.py the
                   unicode-seams generator; strategies.py the Hypothesis strategies
    findings.py    what a finding is: one (backend, cause); two bugs in one text are two findings
    steering.py    which generator gives the next case: those whose cases are not all explained
    ledger.py      the journal kept small: counts and outcomes, the first cases of each cause in full
    shrink.py      delta debugging of a failing text
    sample.py      the cases kept at random for each backend's verdict
    loop.py        the run (run_fuzz): generators, Hypothesis, findings, the clock, resuming

The time budget covers everything but loading the model and backends. The cases take nine tenths
of it. The generators get half of that, or all of it without Hypothesis. Hypothesis gets the rest,
and whatever finite generators leave over. Shrinking happens as causes are found, each bounded by
``shrink_seconds``. The last tenth goes to the verdicts and to naming the findings again. A run
with the same seed tries the same texts in the same order on the same engine (how far it gets
depends on speed), and a resumed run goes on exactly where the interrupted one stopped.

The findings are a corpus (``{"id", "text", "cause", "tags": {"kind": "fuzz", "class", "backend",
"model", …}}``) ready to commit as regression cases and to replay with ``tokparity compare -c FILE``.
"""
