"""What every converter shares: the list of what a conversion could not carry over."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConversionWarning:
    """One field the target format could not hold as the source had it."""

    field: str
    why: str

    def __str__(self) -> str:
        return f"{self.field}: {self.why}"


class Warnings(list):
    """A list of ``ConversionWarning`` with a one-word way to add to it."""

    def add(self, field_name: str, why: str) -> None:
        self.append(ConversionWarning(field_name, why))
