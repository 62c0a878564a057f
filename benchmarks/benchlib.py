"""What every benchmark script shares: where results go, and how a target is judged.

Each script collects ``Measurement`` rows and calls ``save(bench_name, rows)``, which writes

    reports/bench/<bench_name>.json   the rows, with the machine they came from
    reports/bench/<bench_name>.md     the same as a Markdown table (the README quotes these)

and returns whether every row that has a target met it. ``nox -s bench`` then joins the
Markdown files into reports/bench/README.md (``python benchmarks/benchlib.py --join``).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

OUT = Path(os.environ.get("TOKPARITY_BENCH_DIR", "reports/bench"))


@dataclass
class Measurement:
    name: str  # what was measured, e.g. "ref / sentencepiece on botchan-unigram"
    value: float
    unit: str  # "ratio", "s", "µs/case", "cases/s", "MiB", ...
    target: str = ""  # e.g. ">= 0.2", "<= 1"; empty: for information
    detail: str = ""  # the medians behind a ratio, the inputs

    @property
    def met(self) -> bool | None:
        if not self.target:
            return None
        op, bound = self.target.split()
        return self.value >= float(bound) if op == ">=" else self.value <= float(bound)


def machine() -> dict:
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(), "load_average_at_start": load,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def _format(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def save(bench: str, rows: list[Measurement], title: str = "") -> bool:
    """Write the JSON and Markdown files; print the table; True if every target was met."""
    OUT.mkdir(parents=True, exist_ok=True)
    info = machine()
    (OUT / f"{bench}.json").write_text(json.dumps(
        {"bench": bench, "machine": info,
         "rows": [{**asdict(r), "met": r.met} for r in rows]}, indent=2, ensure_ascii=False) + "\n", "utf-8")
    lines = [f"### {title or bench}", "",
             f"{info['cpus']} cpus, Python {info['python']}, load average {info['load_average_at_start']}, "
             f"{info['date']}", "",
             "| measurement | value | unit | target | met | detail |", "|---|---:|---|---|---|---|"]
    for r in rows:
        met = {None: "", True: "yes", False: "**NO**"}[r.met]
        lines.append(f"| {r.name} | {_format(r.value)} | {r.unit} | {r.target} | {met} | {r.detail} |")
    text = "\n".join(lines) + "\n"
    (OUT / f"{bench}.md").write_text(text, "utf-8")
    print("\n" + text, flush=True)
    return all(r.met is not False for r in rows)


def join() -> None:
    """reports/bench/README.md: every bench's table, in name order."""
    parts = [p.read_text("utf-8") for p in sorted(OUT.glob("*.md")) if p.name != "README.md"]
    (OUT / "README.md").write_text("## tokparity benchmarks\n\n" + "\n".join(parts), "utf-8")
    print(f"wrote {OUT / 'README.md'} ({len(parts)} benchmarks)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--join"]:
        join()
    else:
        sys.exit("usage: python benchmarks/benchlib.py --join")
