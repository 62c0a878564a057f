"""What a process that judges cases elsewhere sends the driver: a ``--jobs`` worker over its
socket (tokparity.run.parallel), a Ray actor as its replies (tokparity.run.cluster). The driver's
``ModelLedger`` reads the same types whichever sent them.

    Started   the model loaded: the oracle chain, the backends that started, their versions
    Judged    records of cases, in case order within the batch
    Named     the causes of a whole model judged in order (the driver then takes them)
    Finished  a task is done: how many cases it saw, its seconds judging and closing
    Failed    what went wrong (one line for bad input; a traceback for a bug)
    Said      a progress line to show

A worker sends ``(model index, message)``; an actor's reply is ``Reply`` (its progress lines
and one message), since Ray returns one value per call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tokparity import __version__
from tokparity.records import CaseRecord, Diagnosed


@dataclass(frozen=True)
class Started:
    chain: list[str]
    backends: list[str]
    decoder: str | None  # who judges the decoding ops (tokparity.run.ops.decoder_of)
    versions: dict[str, dict]  # backend -> {"version": …}, as summary.json's "backends"
    options: dict  # the results' options the model's loading added (backends unavailable)
    load_seconds: float
    tokparity: str = __version__  # an actor on a node with another release is refused


@dataclass(frozen=True)
class Judged:
    records: list[CaseRecord]


@dataclass(frozen=True)
class Named:
    diagnosed: Diagnosed


@dataclass(frozen=True)
class Finished:
    cases: int  # the positions the task's stream of cases covered
    seconds: float  # loading and judging
    close_seconds: float


@dataclass(frozen=True)
class Failed:
    error: str


@dataclass(frozen=True)
class Said:
    message: str


Message = Started | Judged | Named | Finished | Failed | Said


@dataclass(frozen=True)
class Reply:
    """A Ray actor's answer to one call."""

    message: Started | Judged | Failed
    said: list[str] = field(default_factory=list)
