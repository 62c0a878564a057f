"""Regenerate ``_hf_unicode_data.py``: the Unicode tables tokenizers (the Rust library) is built with.

tokenizers does not ask one Unicode version about characters; each crate it links carries its
own tables, frozen when that crate was published. Python's ``unicodedata`` (Unicode 14.0 in
Python 3.11) and the ``regex`` module (newer) answer for recently assigned characters what
tokenizers does not. So the reference reads the crates' own tables, regenerated here from
their sources (tokenizers 0.23.3 links the versions named below: its wheel names
``onig-6.5.3`` and ``unicode-normalization-alignments-0.1.12``, and its Cargo.toml asks for
``unicode_categories = "0.1"``, of which 0.1.1 is the only release):

    python -m tools.hf_unicode_gen \\
        --categories  unicode_categories-0.1.1/        (Debian librust-unicode-categories-dev 0.1.1-2)
        --normalization unicode-normalization-alignments/src/tables.rs   (0.1.12, n1t0 9ca6960)
        --derived-age DerivedAge.txt                    (Debian unicode-data 15.0.0)
        --scripts tokenizers/src/pre_tokenizers/unicode_scripts/scripts.rs   (tokenizers b1c9bc68)
        --onig oniguruma/src/unicode_property_data.c    (Oniguruma 6.9.10, 94877ac, in onig_sys 69.9)
        --regex-syntax regex-syntax/src/unicode_tables/  (rust-lang/regex tag regex-syntax-0.8.11)

Each table is a list of inclusive (first, last) code-point ranges, written as hexadecimal.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tokparity" / "reference" / "_hf_unicode_data.py"


def ranges_of(points) -> list[tuple[int, int]]:
    """Sorted code points -> inclusive (first, last) runs."""
    out: list[list[int]] = []
    for cp in sorted(set(points)):
        if out and out[-1][1] + 1 == cp:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [(a, b) for a, b in out]


def _rust_chars(block: str) -> list[int]:
    return [int(x, 16) for x in re.findall(r"'\\u\{([0-9A-Fa-f]+)\}'", block)]


def _rust_static(source: str, name: str) -> str:
    start = source.index(f"pub static {name} ")
    return source[start:source.index("];", start)]


def _rust_fn_ranges(lib: str, fn: str) -> list[int]:
    """The ``'\\u{A}'...'\\u{B}' => true`` arms of one of the crate's trait methods."""
    start = lib.index(f"fn {fn}(self) -> bool {{\n        match")
    body = lib[start:lib.index("_ =>", start)]
    points: list[int] = []
    for a, b in re.findall(r"'\\u\{([0-9A-Fa-f]+)\}'\s*\.\.\.\s*'\\u\{([0-9A-Fa-f]+)\}'", body):
        points += range(int(a, 16), int(b, 16) + 1)
    return points


def unicode_categories(crate: Path) -> dict[str, list[tuple[int, int]]]:
    """unicode_categories 0.1.1: ``is_mark_nonspacing``, ``is_other`` and ``is_punctuation``."""
    tables = (crate / "src" / "tables.rs").read_text("utf-8")
    lib = (crate / "src" / "lib.rs").read_text("utf-8")
    chars = lambda *names: [cp for name in names for cp in _rust_chars(_rust_static(tables, name))]  # noqa: E731
    other = chars("OTHER_CONTROL", "OTHER_FORMAT", "OTHER_PRIVATE_USE") + _rust_fn_ranges(lib, "is_other_private_use")
    punctuation = chars("PUNCTUATION_CONNECTOR", "PUNCTUATION_DASH", "PUNCTUATION_CLOSE", "PUNCTUATION_FINAL_QUOTE",
                        "PUNCTUATION_INITIAL_QUOTE", "PUNCTUATION_OTHER", "PUNCTUATION_OPEN")
    return {"CATEGORIES_MN": ranges_of(chars("MARK_NONSPACING")), "CATEGORIES_OTHER": ranges_of(other),
            "CATEGORIES_PUNCTUATION": ranges_of(punctuation)}


def normalization_marks(tables_rs: Path) -> tuple[str, list[tuple[int, int]]]:
    """unicode-normalization-alignments: its Unicode version and ``is_combining_mark``'s set."""
    source = tables_rs.read_text("utf-8")
    found = re.search(r"UNICODE_VERSION: \(u64, u64, u64\) = \((\d+), (\d+), (\d+)\)", source)
    if found is None:
        raise SystemExit(f"{tables_rs}: no UNICODE_VERSION; is this unicode-normalization-alignments' tables.rs?")
    version = ".".join(found.groups())
    start = source.index("COMBINING_MARK_KV: &[u32] = &[")
    block = source[start:source.index("];", start)]
    return version, ranges_of(int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]+)", block.split("=", 1)[1]))


def assigned_by(derived_age: Path, version: str) -> list[tuple[int, int]]:
    """Code points assigned in Unicode ``version`` or before (DerivedAge.txt)."""
    limit = tuple(int(x) for x in version.split(".")[:2])
    points: list[int] = []
    for line in derived_age.read_text("utf-8").splitlines():
        m = re.match(r"([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*(\d+)\.(\d+)", line)
        if m and (int(m[3]), int(m[4])) <= limit:
            points += range(int(m[1], 16), int(m[2] or m[1], 16) + 1)
    return ranges_of(points)


def scripts(scripts_rs: Path) -> list[tuple[int, int, str]]:
    """tokenizers' ``get_script`` arms, adjacent ranges of one script merged."""
    arms = re.findall(r"0x([0-9A-F]+)(?:\.\.=0x([0-9A-F]+))? => Script::(\w+)", scripts_rs.read_text("utf-8"))
    out: list[list] = []
    for a, b, name in sorted(arms, key=lambda arm: int(arm[0], 16)):
        first, last = int(a, 16), int(b or a, 16)
        if out and out[-1][2] == name and out[-1][1] + 1 == first:
            out[-1][1] = last
        else:
            out.append([first, last, name])
    return [(a, b, name) for a, b, name in out]


def onig_assigned(property_data: Path) -> list[tuple[int, int]]:
    source = property_data.read_text("utf-8")
    start = source.index("CR_Assigned[] = {")
    numbers = [int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]+)", source[start:source.index("}", start)])]
    return list(zip(numbers[0::2], numbers[1::2]))


_RUST_CHAR = r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^'\\])'"
_RUST_ESCAPES = {"t": 9, "n": 10, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34}


def _rust_char(literal: str) -> int:
    if literal.startswith("\\u{"):
        return int(literal[3:-1], 16)
    if literal.startswith("\\"):
        return _RUST_ESCAPES[literal[1]]
    return ord(literal)


def regex_syntax_table(path: Path, const: str) -> list[tuple[int, int]]:
    """One ``(char, char)`` table of the Rust ``regex`` crate (``PERL_WORD``, ``WHITE_SPACE``)."""
    source = path.read_text("utf-8")
    start = source.index(f"pub const {const}: &'static [(char, char)] = &[")
    block = source[start:source.index("];", start)]
    pairs = re.findall(rf"\(\s*{_RUST_CHAR},\s*{_RUST_CHAR}\s*\)", block)
    return [(_rust_char(a), _rust_char(b)) for a, b in pairs]


def _hex_ranges(ranges, per_line: int = 8) -> str:
    words = [f"{a:x}-{b:x}" if a != b else f"{a:x}" for a, b in ranges]
    return "\n".join(" ".join(words[i:i + per_line]) for i in range(0, len(words), per_line))


def generate(args) -> str:
    categories = unicode_categories(args.categories)
    norm_version, marks = normalization_marks(args.normalization)
    script_ranges = scripts(args.scripts)
    tables = {
        **categories,
        "NORMALIZATION_MARK": marks,
        "NORMALIZATION_ASSIGNED": assigned_by(args.derived_age, norm_version),
        "ONIG_ASSIGNED": onig_assigned(args.onig),
        "RUST_REGEX_WORD": regex_syntax_table(args.regex_syntax / "perl_word.rs", "PERL_WORD"),
        "RUST_REGEX_SPACE": regex_syntax_table(args.regex_syntax / "perl_space.rs", "WHITE_SPACE"),
    }
    names = sorted({name for _, _, name in script_ranges})
    script_lines = [f"{a:x}-{b:x} {name}" for a, b, name in script_ranges]
    body = "".join(f'{name} = """\n{_hex_ranges(ranges)}\n"""\n\n' for name, ranges in tables.items())
    return (
        '"""GENERATED by hf_unicode_gen.py; do not edit. The Unicode tables tokenizers 0.23.3 is built with.\n\n'
        "Ranges ``first-last`` (or one code point), hexadecimal, whitespace-separated.\n"
        "CATEGORIES_*: crate unicode_categories 0.1.1 (UnicodeData.txt of Unicode 8.0; its lib.rs adds\n"
        "  the private-use planes): is_mark_nonspacing, is_other (Cc Cf Co), is_punctuation (P*).\n"
        f"NORMALIZATION_MARK: crate unicode-normalization-alignments 0.1.12 (Unicode {norm_version}), is_combining_mark.\n"
        f"NORMALIZATION_ASSIGNED: code points assigned in Unicode {norm_version} (DerivedAge.txt), the ones that\n"
        "  crate's NFD/NFC/NFKD/NFKC know.\n"
        "ONIG_ASSIGNED: Oniguruma 6.9.10 (Unicode 16.0, bundled by onig_sys 69.9) CR_Assigned.\n"
        "RUST_REGEX_WORD, RUST_REGEX_SPACE: crate regex-syntax 0.8.11 (Unicode 16.0), \\\\w and \\\\s.\n"
        "SCRIPTS: tokenizers' own get_script (src/pre_tokenizers/unicode_scripts/scripts.rs), one\n"
        f"  ``first-last Script`` per line; any other code point is Any. Scripts: {len(names)}.\n"
        '"""\n\n'
        f"NORMALIZATION_UNICODE = {norm_version!r}\n\n"
        f"{body}"
        'SCRIPTS = """\n' + "\n".join(script_lines) + '\n"""\n'
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--categories", type=Path, required=True, help="unicode_categories-0.1.1 crate folder")
    parser.add_argument("--normalization", type=Path, required=True,
                        help="unicode-normalization-alignments 0.1.12 src/tables.rs")
    parser.add_argument("--derived-age", type=Path, required=True, help="DerivedAge.txt")
    parser.add_argument("--scripts", type=Path, required=True, help="tokenizers' unicode_scripts/scripts.rs")
    parser.add_argument("--onig", type=Path, required=True, help="Oniguruma's src/unicode_property_data.c")
    parser.add_argument("--regex-syntax", type=Path, required=True, help="regex-syntax 0.8.11 src/unicode_tables/")
    OUT.write_text(generate(parser.parse_args(argv)), "utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
