"""Do two builds of tokparity give the same outputs? For a change meant to keep behaviour (a
refactoring): run the same commands with the tree before and the tree after, each into its own
folder, then

    python -m tools.same_outputs BEFORE_DIR AFTER_DIR RUN [RUN …]

compares, for each run folder RUN of both: ``mismatches.csv`` and ``fuzz-findings.jsonl`` byte for
byte; ``cases.jsonl`` byte for byte but for each line's seal and the header's signature (the user's key's) and random ``run`` (a fuzz run's journal: its case records byte for byte, and its
findings without the seconds at which they were found and shrunk, which are the clock's, not the
code's; its notes of counted cases are flushed every few seconds, so where they fall is the clock's
too); ``summary.json`` without ``seconds`` and ``timing`` (and a fuzz finding's seconds). Exit 0 when
every file is the same, 1 otherwise; each file is named with ``same`` or ``DIFF``.

A fuzz run's outputs are the code's only when it stops by exhausting its generators, not by its
time budget: ``fuzz MODEL -g unicode-seams -g ascii-pairs --no-hypothesis --seconds 3000``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

TIMES = ("found_after", "shrink_seconds")


SEAL = re.compile(rb', "seal": "[0-9a-f]{32}"')


def journal(path: Path) -> object:
    raw = SEAL.sub(b"", path.read_bytes())
    first, newline, rest = raw.partition(b"\n")
    try:  # (the header's run is random, its signature the key's: neither is the code's)
        header = {k: v for k, v in json.loads(first).items() if k not in ("run", "signature")}
        raw = json.dumps(header).encode() + newline + rest
    except (ValueError, AttributeError):
        pass
    lines = raw.decode("utf-8").splitlines()
    if not lines or '"command": "fuzz"' not in lines[0]:
        return raw
    kept = []
    for line in lines[1:]:
        entry = json.loads(line)
        if "note" not in entry:
            kept.append(line)
        elif "finding" in entry["note"]:
            finding = entry["note"]["finding"]
            kept.append(json.dumps({k: v for k, v in finding.items() if k not in TIMES}, ensure_ascii=False))
    return kept


def summary(path: Path) -> object:
    doc = json.loads(path.read_text("utf-8"))
    doc.pop("seconds", None)
    doc.pop("timing", None)
    for finding in doc.get("options", {}).get("fuzz", {}).get("findings", []):
        for key in TIMES:
            finding.pop(key, None)
    return json.dumps(doc, ensure_ascii=False)


READERS = {"mismatches.csv": Path.read_bytes, "fuzz-findings.jsonl": Path.read_bytes, "cases.jsonl": journal,
           "summary.json": summary}


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[4].strip(), file=sys.stderr)
        return 2
    before, after, runs = Path(argv[0]), Path(argv[1]), argv[2:]
    differ = 0
    for run in runs:
        for name, read in READERS.items():
            a, b = before / run / name, after / run / name
            if not a.exists() and not b.exists():
                continue
            same = a.exists() and b.exists() and read(a) == read(b)
            differ += not same
            print(f"{'same' if same else 'DIFF'}  {run}/{name}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
