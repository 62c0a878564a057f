"""Build corpora/seams.jsonl: the Unicode and regex-engine seams, compact, for every ``compare``.

A port runs the model's split regex with its own language's regex engine and Unicode tables, and
they disagree on a few code points (ECMAScript's ``\\s`` has no U+0085, RE2's is ASCII, Node and
llama.cpp read different Unicode versions, ...). ``tokparity.fuzz.seams`` lists those seams;
this corpus is each seam's code points (``compact_members``) in the contexts that show them
(``compact_contexts``): about 1,500 short texts, so that a plain ``compare`` finds what before
only ``fuzz`` did. The ``unicode-seams`` generator of ``fuzz`` tries every member in more contexts.

Records: ``{"id": "seams-NNNN-U+XXXX", "text": ..., "tags": {"script": "Zyyy", "lang": "und",
"kind": "seam", "seam", "context"}}`` (no script or language: single code points in ASCII frames),
written with ``\\u`` escapes only (ASCII), so no invisible character hides in the file. The
tables are read from the ``regex`` module, Python's ``unicodedata`` (and its Unicode 3.2) and
llama.cpp's generated tables (``tokparity.reference.unicode``), so another release of the first
two may give other representatives; the committed file is the corpus
(``python corpora/_build_seams.py`` from a checkout rewrites it).
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import regex

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tokparity.fuzz.seams import seam_texts  # noqa: E402

OUT = Path(__file__).resolve().parent / "seams.jsonl"


def main() -> None:
    lines, seen = [], set()
    for n, (text, tags) in enumerate(seam_texts(compact=True), 1):
        if text in seen:
            raise ValueError(f"duplicate text {text!r}")
        seen.add(text)
        codepoint = tags.pop("codepoint")
        tags = {"script": "Zyyy", "lang": "und", **tags}
        lines.append(json.dumps({"id": f"seams-{n:04d}-{codepoint}", "text": text, "tags": tags}) + "\n")
    OUT.write_text("".join(lines), encoding="ascii", newline="\n")  # (written once every line is made)
    print(f"wrote {len(lines)} records to {OUT} (regex {regex.__version__}, unicodedata {unicodedata.unidata_version})")


if __name__ == "__main__":
    main()
