"""Check that each flag of the blind engines, alone, changes the ids of some text.

    python selfcheck.py        (with tokparity importable: it asks `tokparity zoo path` for the files)

Runs each engine through its ``cmd:`` protocol, once without flags and once per flag, on a few
texts chosen to show each bug, and prints the ids as a Markdown table (README.md holds a copy).
Exit status 1 if a flag that should change something on a model does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def zoo_file(model: str, role: str) -> str:
    out = subprocess.run([sys.executable, "-m", "tokparity.cli", "zoo", "path", model],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name, path = line.split("\t")[:2]
        if name == role:
            return path
    raise SystemExit(f"{model} has no {role} file")


def encode_all(argv: list[str], texts: list[str], parse_special: bool = False) -> list[list[int]]:
    reqs = "".join(json.dumps({"id": k, "op": "encode", "text": t, "add_special": False,
                               "parse_special": parse_special}) + "\n" for k, t in enumerate(texts))
    out = subprocess.run([sys.executable, *argv], input=reqs, capture_output=True, text=True, check=True).stdout
    replies = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in replies] == list(range(len(texts))), out
    return [r["ids"] for r in replies]


# (engine file, model, file role, flag, texts, whether the flag must change something there)
CHECKS = [
    ("spm_greedy.py", "llama-spm", "gguf", "--no-escape", ["Hello world", "a  b"], True),
    ("spm_greedy.py", "llama-spm", "gguf", "--no-prefix", ["Hello world", "It's raining."], True),
    ("spm_greedy.py", "llama-spm", "gguf", "--ignore-user-defined", ["a\n\nb"], False),
    ("spm_greedy.py", "gemma-3", "gguf", "--no-escape", ["Hello world", "a  b"], True),
    ("spm_greedy.py", "gemma-3", "gguf", "--no-prefix", ["Hello world"], False),
    ("spm_greedy.py", "gemma-3", "gguf", "--ignore-user-defined", ["a\n\nb", "<table>x"], True),
    ("byte_bpe.py", "llama-bpe", "tokenizer_json", "--digits-unbounded", ["12345678", "v3.11.7 2026"], True),
    ("byte_bpe.py", "llama-bpe", "tokenizer_json", "--unicode-3.2", ["hello\u200b\u200b!", "Tamil \u0be6", "\u07d2\u07de\u07cf!"], True),
    ("byte_bpe.py", "llama-bpe", "tokenizer_json", "--always-parse-special", ["<|begin_of_text|>hi"], True),
    ("byte_bpe.py", "llama-bpe", "tokenizer_json", "--newline-run-stops", ["\n \n", "x\n  \ny", " \n \n"], True),
    ("byte_bpe.py", "llama-bpe", "tokenizer_json", "--tab-prefixes-punct", ['\t"fmt', "a\t-b", "\tfoo"], True),
    ("byte_bpe.py", "llama-bpe", "tokenizer_json", "--ascii-word-prefix", ["a\u00a0b", "a\u3000b", "\u00abword"], True),
    ("byte_bpe.py", "llama-bpe", "tokenizer_json", "--space-joins-number", ["a \u00bd", "step \u2460 then \u2461", "Chapter \u216b", "a 1", "! \u00bd",
                                                                              "a\n \u00bd", "a \u00a0\u00bd"], True),
    ("byte_bpe.py", "llama-bpe", "tokenizer_json", "--split-mixed-trailing-space", [" \t", "a\t ", "hello \u00a0", "   ", "\t\t"], True),
    ("byte_bpe.py", "llama-bpe", "tokenizer_json", "--backtracking", [" ka\u017edou", " \u00e7\u0131kt\u0131k", " \u0433\u0440\u0430\u0434\u0443\u0441\u043e\u0432",
                                                                         " ka\u017ed", "Hello world, ordinary text."], True),
]


def main() -> int:
    failed = 0
    print("| engine | model | flag | text | no flag | with the flag |")
    print("|---|---|---|---|---|---|")
    for engine, model, role, flag, texts, must_change in CHECKS:
        path = zoo_file(model, role)
        base = encode_all([os.path.join(HERE, engine), path], texts)
        bugged = encode_all([os.path.join(HERE, engine), path, flag], texts)
        changed = base != bugged
        if changed != must_change:
            failed += 1
        for text, a, b in zip(texts, base, bugged):
            shown = json.dumps(text, ensure_ascii=True).replace("|", "\\|")  # a Markdown cell
            print(f"| {engine} | {model} | `{flag}` | `{shown}` | {a} | {b}{'' if a != b else ' (same)'} |")
        if changed != must_change:
            print(f"| | | | **expected {'a change' if must_change else 'no change'}** | | |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
