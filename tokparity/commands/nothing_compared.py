"""A run that compared nothing of what was asked: why, in words, and its refusal (exit 2)."""

from __future__ import annotations

from pathlib import Path


def refuse_nothing_judged(results, out: Path, backends: list[str] | None = None) -> None:
    """A run whose backends skipped every case (a fuzzed engine that answers none) is nothing
    compared: exit 2, not "no failure found". So is a run where one of ``backends`` (those named
    with ``-b``) judged no case (``refuse_named_unjudged``)."""
    from tokparity.errors import TokparityError

    # (regress: a digest-only corpus whose digest changed is judged, though no case of it ran)
    if not results.interrupted and not any(r.cases or r.unexplained for r in results.runs):
        raise TokparityError(f"nothing was compared: every backend skipped every case (or there was none); the "
                             f"reports are in {out}")
    refuse_named_unjudged(results, backends or [], out)


def refuse_named_unjudged(results, backends: list[str], out: Path) -> None:
    """Nothing compared of what the user asked: a backend named with ``-b`` judged no case
    (``named_unjudged``)."""
    from tokparity.errors import TokparityError

    reason = named_unjudged(results, backends)
    if reason:
        raise TokparityError(f"nothing was compared{reason}; the reports are in {out}")


def named_unjudged(results, backends: list[str]) -> str:
    """Why nothing was compared of what the user asked, after "nothing was compared", or "": a
    backend named with ``-b`` judged no case (an engine that skipped all), though others did
    (``-b ref`` beside it, or llama.cpp against the golden ids beside it). Its ✅ would say nothing of it."""
    from tokparity.backends.registry import labelled

    if results.interrupted:
        return ""
    named = set(labelled(backends))
    # (regress: a digest-only corpus whose digest changed judged that backend, though no case of it ran)
    judged = {r.backend for r in results.runs if r.cases or r.unexplained}
    # (a backend that is an oracle judges the others: "hf", "golden/llama.cpp", "template+hf")
    oracles = {name for r in results.runs if r.cases for name in (r.oracle, r.oracle.split("+")[-1])}
    unjudged = sorted(named - judged - oracles)
    if unjudged:
        return f": {', '.join(unjudged)} judged no case (each skipped, or not applicable)"
    # (per model too: an engine that skipped every case of one model, on every op, says nothing of it)
    pairs = {(r.model, r.backend) for r in results.runs if r.backend in named - oracles}
    judged_pairs = {(r.model, r.backend) for r in results.runs if r.cases or r.unexplained}
    on_none = sorted(f"{backend} on {model}" for model, backend in pairs - judged_pairs)
    if on_none:
        return f" of {', '.join(on_none)}: it judged no case of that model (each skipped, or not applicable)"
    # A backend that failed on every case gave no answer to compare, even where a known divergence
    # covers its failures (a --known entry for timeouts, and an engine that never answers).
    answered = {r.backend for r in results.runs
                if r.mismatches < r.cases or r.unexplained or not set(r.classes) <= {"crash", "timeout"}}
    silent = sorted(named & ({r.backend for r in results.runs if r.cases} - answered))
    if silent:
        return f": {', '.join(silent)} answered no case (each a crash or a timeout, every one a known divergence)"
    if not answered and any(r.cases for r in results.runs):  # (an --oracle that fails on every case too)
        return (": every case was a crash or a timeout, of the engine or of the oracle, every one a known "
                "divergence")
    return ""


FEW_CONVERSATIONS = 10


def refuse_silent_templates(results, out: Path) -> None:
    """A chat run is nothing compared on a model whose template gave a prompt for no conversation
    (``silent_template``)."""
    from tokparity.errors import TokparityError

    silent = _silent_run(results)
    if silent is not None:
        reason = silent_template(results)
        # (a handful of conversations, a short fuzz's, may all be ones the template rightly refuses)
        few = silent.skipped < FEW_CONVERSATIONS
        advice = "try more conversations (more --seconds, a larger corpus), or fix the template" if few else \
            "fix the template"
        raise TokparityError(f"nothing was compared: {reason}: {advice}; the reports are in {out}")


def silent_template(results) -> str:
    """Why a chat run compared nothing, or "": a model's template gave a prompt for no conversation
    (it raised on each, never compiled, or wrote nothing). Both sides refusing every conversation,
    or both giving "", agree but prove nothing. The template's own check of its special tokens
    judges exactly the conversations that gave a prompt, so it counts them."""
    run = _silent_run(results)
    if run is None:
        return ""
    return (f"the chat template of {run.model} gave a prompt for none of the {run.skipped} conversations "
            "(it raised on each, does not compile, or wrote nothing)")


def _silent_run(results):
    """The template's own check of a model whose template gave a prompt for no conversation, or None."""
    from tokparity.chat import SPECIALS_CHECK

    if results.interrupted:
        return None
    return next((run for run in results.runs if run.backend == SPECIALS_CHECK and run.cases == 0 and run.skipped),
                None)


def with_nothing_compared(results, backends: list[str] | None):
    """``results`` as its reports show it: where it compared nothing of what was asked, a new record
    that says why, so that no report of it is titled ✅."""
    import dataclasses

    silent = silent_template(results)
    reason = f": {silent}" if silent else named_unjudged(results, backends or [])
    return dataclasses.replace(results, nothing_compared=reason) if reason else results
