"""Build corpora/emoji.jsonl from the `emoji` package's list of fully-qualified sequences.

Every fully-qualified emoji sequence of the Unicode release the package follows, alone; then in
runs of eight; then glued to words and punctuation. Deterministic: re-running with the same
`emoji` version gives the same file (`python corpora/_build_emoji.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

import emoji

FULLY_QUALIFIED = 2  # emoji.STATUS["fully_qualified"]
SKIN_TONES = set(range(0x1F3FB, 0x1F400))
GLUE = ("Hello{}world", "{}!", "({})", "«{}»", "{}{}", " {} ", "ok{}.", "{}\n", "1{}2", "\"{}\"")


def kind(seq: str) -> str:
    cps = [ord(c) for c in seq]
    if any(0xE0020 <= c <= 0xE007F for c in cps):
        return "subdivision-flag"
    if all(0x1F1E6 <= c <= 0x1F1FF for c in cps):
        return "flag"
    if 0x20E3 in cps:
        return "keycap"
    if 0x200D in cps:
        return "zwj" + ("-skin-tone" if SKIN_TONES & set(cps) else "")
    if SKIN_TONES & set(cps):
        return "skin-tone"
    if 0xFE0F in cps:
        return "variation-selector"
    return "single"


def main() -> None:
    sequences = sorted((e for e, d in emoji.EMOJI_DATA.items() if d["status"] == FULLY_QUALIFIED),
                       key=lambda s: [ord(c) for c in s])
    records = []

    def add(text: str, k: str, **extra) -> None:
        records.append({"id": f"emoji-{len(records):05d}", "text": text,
                        "tags": {"script": "Zyyy", "lang": "und", "kind": k, **extra}})

    for seq in sequences:
        add(seq, kind(seq), E=str(emoji.EMOJI_DATA[seq]["E"]))
    for start in range(0, len(sequences), 8):
        add("".join(sequences[start:start + 8]), "run")
    for n, seq in enumerate(sequences[::7]):
        template = GLUE[n % len(GLUE)]
        add(template.format(seq, seq) if template.count("{}") == 2 else template.format(seq), "glued")
    seen, unique = set(), []
    for r in records:
        if r["text"] not in seen:
            seen.add(r["text"])
            unique.append(r)
    out = Path(__file__).with_name("emoji.jsonl")
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for r in unique:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{out}: {len(unique)} records from emoji {emoji.__version__} ({len(sequences)} fully-qualified sequences)")


if __name__ == "__main__":
    main()
