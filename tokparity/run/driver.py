"""Where a compare run's cases are judged: in this process, in worker processes (``--jobs N``,
``tokparity.run.parallel``) or on a Ray cluster (``--ray``, ``tokparity.run.cluster``).

Each way takes a model's cases through the same pipeline (``tokparity.run.pipeline``): judged by
the same code, counted in case order into the same journal, diagnosed and decided once all are
in. So their reports, ``--resume`` and exit status are those of one process. One difference: a
model that cannot be opened stops a run of workers or Ray tasks, where one process goes on with
the other models (``NOT_OPENED``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from tokparity import __version__
from tokparity.checks import PROPERTIES, ModelCheck, PropertyCheck
from tokparity.errors import TokparityError
from tokparity.run.cluster import run_models_on_ray
from tokparity.run.journal.interrupt import deferring_ctrl_c
from tokparity.run.ledger import ModelLedger
from tokparity.run.memory import collector_relaxed
from tokparity.run.model_checks import check_model
from tokparity.run.options import CompareOptions
from tokparity.run.parallel import run_models_in_workers
from tokparity.run.pipeline import ModelPipeline
from tokparity.run.results import NOT_OPENED, Results, ResultsSoFar


def run_compare(models: Iterable[str], corpora: Iterable[str], backend_names: list[str] | None,
                options: CompareOptions) -> Results:
    """Every model on every case. With ``options.services.journal`` each case is written as it is judged,
    and cases the journal already holds are replayed, not run again (``--resume``). Ctrl-C stops
    the run: the results of the cases done are returned, marked ``interrupted``."""
    started = time.perf_counter()
    decoding = options.decoding
    results = ResultsSoFar(options={"add_special": options.add_special, "parse_special": options.parse_special} |
                           ({"skip_special": True} if decoding.skip_special else {}) |
                           ({"clean_up_spaces": decoding.clean_up} if decoding.clean_up is not None else {}) |
                           ({"spaces_between_specials": True} if decoding.spaces_between_specials else {}) |
                           ({"remove_special": True} if decoding.remove_special else {}) |
                           ({"diagnose": False} if not options.diagnose else {}))
    with deferring_ctrl_c(), collector_relaxed():
        return _run_compare(list(models), list(corpora), backend_names, options, results, started)


def _run_compare(models: list[str], corpora: list[str], backend_names: list[str] | None, options: CompareOptions,
                 results: ResultsSoFar, started: float) -> Results:
    results.timing_jobs = options.jobs
    if options.jobs > 1 and options.services.ready:
        options.say(f"--jobs {options.jobs}: backends made by the caller cannot move to worker processes; "
                    "running in this process")
    elif options.jobs > 1 or options.ray is not None:
        runner = run_models_in_workers if options.ray is None else run_models_on_ray
        try:
            runner(list(models), corpora, backend_names, options, results)
        except KeyboardInterrupt:
            results.interrupted = True
        return _finish(results, options, started, models)
    failed: list[str] = []  # (the words only: an exception's frames would keep the model's backends)
    try:
        for slot, spec in enumerate(models):
            try:
                pipeline = ModelPipeline.open(spec, backend_names, options, results)
            except TokparityError as e:  # (one model's files or backends: the other models still run)
                if len(models) == 1:
                    raise
                said = str(e) if spec in str(e) else f"{spec}: {e}"
                failed.append(said)
                results.options.setdefault(NOT_OPENED, []).append(f"{said}: not compared")
                options.say(f"{said}: not compared; the other models go on")
                continue
            try:
                _run_model(pipeline, corpora, options, slot)
            finally:
                pipeline.close()
                results.runs.extend(pipeline.settle())
    except KeyboardInterrupt:
        results.interrupted = True
    if failed and len(failed) == len(models):  # (every model: nothing to report, as for one)
        raise TokparityError(failed[0])
    return _finish(results, options, started, models)


def _finish(results: ResultsSoFar, options: CompareOptions, started: float, models: list[str]) -> Results:
    known = options.services.known.report() if options.services.known else None
    checks = _checks(models, options, results) if options.checks and not results.interrupted else ()
    return results.final(__version__, time.perf_counter() - started, known, checks=checks)


def _checks(models: list[str], options: CompareOptions, results: ResultsSoFar) -> tuple[ModelCheck, ...]:
    """``--check``: what each model's files hold. The run's cases are judged already, and they
    stay: a file the checks cannot read, a library that fails on it, or a stop signal is said on
    each property not checked (a stop marks the run interrupted, as one during the cases does)."""
    done = []
    for spec in models:
        why = ""
        if results.interrupted:
            why = "not checked: the run was stopped"
        else:
            options.say(f"{spec}: checking what its files hold")
            try:
                done.append(check_model(spec))
                continue
            except KeyboardInterrupt:
                results.interrupted = True
                why = "not checked: the run was stopped"
            except TokparityError as e:
                why = f"not read: {e}"
            except Exception as e:  # (a library failing on a file: the run's reports are still written)
                why = f"the check failed: {type(e).__name__}: {e}"
        done.append(ModelCheck(spec, tuple(PropertyCheck.skipped(p, why) for p in PROPERTIES)))
    return tuple(done)


def _run_model(pipeline: ModelPipeline, corpora: list[str], options: CompareOptions, slot: int = 0) -> None:
    """``slot``: the model's position on the command line, which keys its records in the journal."""
    ledger = ModelLedger(slot, pipeline.run.model.name, 1, pipeline.results, pipeline.tally)
    ledger.replay_journal(options)
    cases = pipeline.cases(corpora, skip=ledger.done.__contains__)
    for batch in cases.batches():
        ledger.take(batch, options)
    ledger.total = cases.total
    ledger.end(options, "")
    # Ctrl-C here: the reports of the run so far, causes named or not
    pipeline.diagnose(corpora)
