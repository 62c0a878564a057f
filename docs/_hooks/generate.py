"""MkDocs hook: the parts of the docs that the package's own files already say, made at build time.

A page asks for a generated block with an HTML comment on a line of its own. The block follows it,
committed, up to ``<!-- end generate -->``, so that a reader of the Markdown file sees it too:

    <!-- generate: classes -->            the bug classes (tokparity/diff/classes.toml)
    <!-- generate: class-rules -->        the classifier's rules, in order (tokparity/diff/classify.py RULES)
    <!-- generate: causes -->             the root causes (tokparity/diagnose/causes.toml), each with the
                                          shapes it gives (docs/_hooks/shapes.toml, tools/cause_shapes.py)
    <!-- generate: cause-order -->        the order of +-joined causes (tokparity/diagnose/variants/rules.py STAGES)
    <!-- generate: csv-columns -->        mismatches.csv's columns (tokparity/run/results.py CSV_COLUMNS)
    <!-- generate: placeholders -->       the cmd: placeholders (tokparity/zoo/manifest.py FILE_ROLES)
    <!-- generate: docstring PATH -->     a module's docstring, e.g. tokparity/reference/spm.py

Each is joined with what only the docs know. docs/_hooks/catalogue.toml holds the classes' real
cases; a cause declares its own, in causes.toml. contracts.toml says what each CSV column holds. Anything that does not line up (a class without a real case, a CSV
column without a description, a known divergence whose cause is in no catalogue, a missing module)
is logged as a warning, which fails `mkdocs build --strict`: the pages cannot silently drift.

A committed block that differs from what the files say now is stale: the build warns, and so
fails. ``python docs/_hooks/generate.py`` writes every block again; ``--check`` only lists the stale.

The source files are read from the checkout (parsed, not imported), so the build needs no
backend library.
"""

from __future__ import annotations

import ast
import logging
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOOKS = Path(__file__).resolve().parent
log = logging.getLogger("mkdocs.hooks.generate")

MARKER = re.compile(r"<!-- generate: (?P<what>[\w-]+)(?: (?P<arg>\S+))? -->")
END = "<!-- end generate -->"


def warn(message: str) -> None:
    log.warning("docs/_hooks/generate.py: %s", message)


def _toml(path: Path) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def prose(text: str) -> str:
    """TOML text as Markdown: ``<unk>`` and ``<0xNN>`` outside code spans are text, not HTML tags."""
    parts = re.split(r"(`[^`]*`)", str(text))
    return "".join(p if p.startswith("`") else p.replace("<", "&lt;").replace(">", "&gt;") for p in parts)


def cell(text: str) -> str:
    """Text for a Markdown table cell: one line, no bare pipes, no HTML."""
    return prose(" ".join(str(text).split())).replace("|", "\\|")


def constant(path: Path, name: str):
    """The literal value assigned to ``name`` at the top level of a Python source file."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise LookupError(f"{path.relative_to(ROOT)} has no top-level {name} = <literal>")


# --- the catalogue ------------------------------------------------------------------------------------


def known_divergences() -> list[dict]:
    return _toml(ROOT / "tokparity" / "known_divergences.toml").get("divergence", [])


def _known_line(d: dict) -> str:
    reason = cell(d.get("reason", "")).split(". ")[0].rstrip(".")
    return (f"`{d['id']}`: {', '.join(d['models'])} × {', '.join(d['backends'])}: {reason}"
            + (f" (cause `{d['cause']}`)" if d.get("cause") else ""))


def _same_names(kind: str, code: dict, code_file: str, described: dict, missing: str) -> None:
    """Warn (a strict build fails) where the code's names and catalogue.toml's differ either way."""
    for name in sorted(set(code) - set(described)):
        warn(f"{kind} {name!r} ({code_file}) {missing} in docs/_hooks/catalogue.toml")
    for name in sorted(set(described) - set(code)):
        warn(f"docs/_hooks/catalogue.toml names {kind} {name!r}, which {code_file} does not have")


def classes_page() -> str:
    classes = _toml(ROOT / "tokparity" / "diff" / "classes.toml")
    cases = _toml(HOOKS / "catalogue.toml")["classes"]
    _same_names("class", classes, "tokparity/diff/classes.toml", cases, "has no real case")
    known = known_divergences()
    deciders = _deciders(classes)
    out = []
    for name, entry in classes.items():
        out += [f"### `{name}`", "", f"**Symptom:** {prose(entry['symptom'])}", "",
                f"**Implication:** {prose(entry['implication'])}", "",
                f"**Decided by:** {deciders[name]}", "",
                f"**Real case:** {prose(cases.get(name) or '–')}", ""]
        shipped = [d for d in known if name in d.get("classes", [])]
        if shipped:
            out += ["**Known divergences of this class shipped with tokparity:**", ""]
            out += [f"- {_known_line(d)}" for d in shipped] + [""]
    return "\n".join(out)


CLASSIFY = ROOT / "tokparity" / "diff" / "classify.py"
SPECIAL_RULES = ROOT / "tokparity" / "diff" / "special_rules.py"
DECODE = ROOT / "tokparity" / "diff" / "decode.py"
CHAT = ROOT / "tokparity" / "diff" / "chat.py"
RULE_DOC = re.compile(r"(?P<classes>[\w-]+(?: / [\w-]+)*): (?P<checks>.+)", re.DOTALL)


def classifier_rules() -> list[tuple[str, list[str], str]]:
    """classify.py's ``RULES`` in order: (rule, the classes it gives, what it checks), read off each
    rule's docstring, which starts with its class (``"space-prefix: one side starts with …"``)."""
    tree = ast.parse(CLASSIFY.read_text(encoding="utf-8"))
    functions = {n.name: n for path in (CLASSIFY, SPECIAL_RULES)  # (the special-token rules are their own module)
                 for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)}
    order = next((n.value for n in tree.body if isinstance(n, ast.AnnAssign | ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "RULES"
                          for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))), None)
    if not isinstance(order, ast.Tuple):
        warn("tokparity/diff/classify.py has no top-level RULES = (rule, …)")
        return []
    rules = []
    for element in order.elts:
        name = element.id if isinstance(element, ast.Name) else ast.unparse(element)
        doc = " ".join((ast.get_docstring(functions[name]) or "").split()) if name in functions else ""
        m = RULE_DOC.fullmatch(doc)
        if m is None:
            warn(f"tokparity/diff/classify.py RULES: rule {name} has no docstring of the form 'class: what it checks'")
            rules.append((name, [], ""))
        else:
            rules.append((name, m["classes"].split(" / "), m["checks"]))
    return rules


def class_rules() -> str:
    classes = _toml(ROOT / "tokparity" / "diff" / "classes.toml")
    rows = ["| # | rule | class | what it checks |", "|---:|---|---|---|"]
    for n, (rule, gives, checks) in enumerate(classifier_rules(), 1):
        for c in gives:
            if c not in classes:
                warn(f"tokparity/diff/classify.py RULES: rule {rule} gives {c!r}, which classes.toml does not describe")
        rows.append(f"| {n} | `{rule}` | {', '.join(f'`{c}`' for c in gives)} | {cell(checks)} |")
    return "\n".join(rows)


def _deciders(classes: dict) -> dict[str, str]:
    """For each class, what decides it: the rules that give it, or the decoding ops of compare --ops."""
    rules = classifier_rules()
    decode = DECODE.read_text(encoding="utf-8")
    chat = CHAT.read_text(encoding="utf-8")
    out = {}
    for name in classes:
        numbers = [f"rule {n} `{rule}`" for n, (rule, gives, _) in enumerate(rules, 1) if name in gives]
        if numbers:
            out[name] = ", ".join(numbers) + " ([the rules](#how-a-class-is-decided))"
        elif f'"{name}"' in decode:
            out[name] = "the decoding ops of `compare --ops` ([decoding](#decoding))"
        elif f'"{name}"' in chat:
            out[name] = "`compare --ops chat` (`tokparity/diff/chat.py`, [check your engine's prompts](../guides/chat.md))"
        else:
            warn(f"class {name!r} (tokparity/diff/classes.toml) is given by no rule of classify.py, decode.py nor chat.py")
            out[name] = "–"
    return out


def _cause_entry(name: str, causes: dict) -> str | None:
    """The causes.toml entry a cause name belongs to: itself, or its family (pretokenizer.gpt-2)."""
    if name in causes:
        return name
    family = name.split(".")[0]
    return family if family in causes else None


DECODING = ("decode", "stream", "pieces")
SHAPES = HOOKS / "shapes.toml"  # written by tools/cause_shapes.py
# What the shape column says of a cause that no variant builds, by how it is named (causes.toml `built`)
UNBUILT = {"stages": "any shape: named where no variant reproduces it", "tie": "same bytes, cut otherwise",
           "release": "any shape: another release's", "judge": "pieces that are not the vocabulary's",
           "reviewed": "the reviewed case's", "learnt": "characters written otherwise or dropped: learnt from the case"}


def shapes(declared: dict) -> dict[str, str]:
    """Each cause's shape column: the kinds of difference its variant gives on the zoo (shapes.toml),
    the most frequent first; a family's are its members' together."""
    measured = _toml(SHAPES)
    for name in measured:
        if _cause_entry(name, declared) is None:
            warn(f"docs/_hooks/shapes.toml names {name!r}, which tokparity/diagnose/causes.toml does not declare")
    out = {}
    for name, entry in declared.items():
        counts: dict[str, int] = {}
        for measured_name, kinds in measured.items():
            if measured_name == name or (entry["built"] == "family" and measured_name.startswith(name + ".")):
                for k, n in kinds.items():
                    counts[k] = counts.get(k, 0) + n
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{k or 'no shape'} ({n:,})" for k, n in top[:3]) + (", …" if len(top) > 3 else "")
        out[name] = shown or entry.get("shape") or UNBUILT.get(entry["built"], "none on the zoo's texts")
    return out


def causes_page() -> str:
    """Every cause of every op, as tokparity/diagnose/causes.toml declares it (the one place)."""
    declared = _toml(ROOT / "tokparity" / "diagnose" / "causes.toml")
    for name, entry in declared.items():
        missing = [key for key in ("stage", "classes", "fix", "spec", "does", "case") if key not in entry]
        if missing:
            warn(f"tokparity/diagnose/causes.toml: {name!r} declares no {', '.join(missing)}")
    causes = {n: e for n, e in declared.items() if e.get("stage") not in (*DECODING, "chat")}
    decoding = {n: e for n, e in declared.items() if e.get("stage") in DECODING}
    chat = {n: e for n, e in declared.items() if e.get("stage") == "chat"}
    by_entry: dict[str, list[dict]] = {}
    for d in known_divergences():
        for part in filter(None, d.get("cause", "").split("+")):
            entry = _cause_entry(part, declared)
            if entry is None:
                warn(f"known divergence {d['id']!r} names cause {part!r}, which no causes.toml entry covers")
            else:
                by_entry.setdefault(entry, []).append(d)
    shape = shapes(declared)
    out = ["| cause | stage | the backend… | shape it gives | real case |", "|---|---|---|---|---|"]
    for name, entry in causes.items():
        title = f"`{name}.<name>`" if name == "pretokenizer" else f"[`{name}`](#{anchor(name)})"
        out.append(f"| {title} | {entry['stage']} | {cell(entry.get('does', ''))} | {cell(shape[name])} "
                   f"| {cell(entry.get('case') or '–')} |")
    out.append("")
    for name, entry in causes.items():
        out += [f"### `{name}`" if name != "pretokenizer" else "### `pretokenizer.<name>`", "",
                f"The backend {prose(entry.get('does') or '…')}.", "",
                f"- **Shows as:** {', '.join(f'`{c}`' for c in entry['classes'])}",
                f"- **Shape:** {shape[name]}",
                f"- **Stage:** {entry['stage']}",
                f"- **Fix:** {prose(entry['fix'])}",
                f"- **Specified by:** `{entry['spec']}`",
                f"- **Real case:** {prose(entry.get('case') or '– (none recorded yet)')}", ""]
        shipped = by_entry.get(name, [])
        if shipped:
            out += ["Known divergences with this cause, shipped with tokparity:", ""]
            out += [f"- {_known_line(d)}" for d in shipped] + [""]
    out += _op_causes("Decoding causes", (
        "`compare --ops decode,stream,pieces` turns the oracle's ids back into text on every backend "
        "([check your engine's streaming](../guides/streaming.md)). A mismatch's cause is the variant of "
        "the reference's decoding (`tokparity/diagnose/decoding.py`) that gives the backend's answer "
        "exactly: its text, the text its deltas add up to, or its bytes, and not what the reference "
        "itself answers; where several do, the one that reproduces most of the engine's mismatches of "
        "that op. A reviewed known divergence may name a cause no variant reproduces (a library's "
        "convention). The names:"), "the backend's decoder…", decoding, _shipped(by_entry, decoding), "a decoding", shape)
    out += _op_causes("Chat causes", (
        "`compare --ops chat` turns conversations into prompts with the model's chat template on every "
        "backend ([check your engine's prompts](../guides/chat.md)). A mismatch's cause is the smallest set "
        "of these ways of making the prompt otherwise that gives the backend's prompt exactly: its ids where "
        "it gave ids, its text where it gave text (`tokparity/diagnose/chat.py`). The search tries up to three "
        "ways of writing the text at once; the ways of encoding it and a BOS text left out come on top. A set "
        "of three is skipped where one of its ways changes nothing: alone, and beside each of the two others. A prompt "
        "none of those reproduces is tried with up to seven of the causes the engine's other prompts show. Then "
        "it is tried with all of them and one more cause of this list. Two or more are joined with `+`."), "the backend…", chat, _shipped(by_entry, chat), "a chat", shape)
    return "\n".join(out)


def _op_causes(title: str, intro: str, does: str, causes: dict, shipped: list[dict], kind: str,
               shape: dict[str, str]) -> list[str]:
    """The section of one op's causes: a table of them, then the known divergences that name them."""
    out = [f"### {title}", "", intro, "", f"| cause | {does} | shape it gives | fix | real case |", "|---|---|---|---|---|"]
    out += [f"| `{name}` | {cell(e.get('does', ''))} | {cell(shape[name])} | {cell(e['fix'])} | {cell(e.get('case') or '–')} |"
            for name, e in causes.items()]
    out.append("")
    if shipped:
        out += [f"Shipped known divergences with {kind} cause:", ""] + [f"- {_known_line(d)}" for d in shipped] + [""]
    return out


def _shipped(by_entry: dict[str, list[dict]], causes: dict) -> list[dict]:
    """The known divergences that name any of ``causes``, each once, in the order first named."""
    return list({d["id"]: d for name in causes for d in by_entry.get(name, [])}.values())


def cause_order() -> str:
    stages = constant(ROOT / "tokparity" / "diagnose" / "variants" / "rules.py", "STAGES")
    return " → ".join(f"`{s}`" for s in stages) + " (`tokparity/diagnose/variants/rules.py`, `STAGES`)"


def anchor(name: str) -> str:
    """The id Python-Markdown's toc gives a heading ``### `name```."""
    return re.sub(r"[^\w\- ]", "", name).strip().lower().replace(" ", "-")


# --- contracts ----------------------------------------------------------------------------------------


def csv_columns() -> str:
    columns = constant(ROOT / "tokparity" / "run" / "results.py", "CSV_COLUMNS")
    described = _toml(HOOKS / "contracts.toml")["csv_columns"]
    for name in columns:
        if name not in described:
            warn(f"mismatches.csv column {name!r} (tokparity/run/results.py CSV_COLUMNS) is not described in "
                 "docs/_hooks/contracts.toml")
    for name in described:
        if name not in columns:
            warn(f"docs/_hooks/contracts.toml describes CSV column {name!r}, which CSV_COLUMNS does not have")
    rows = ["| # | column | what it holds |", "|---:|---|---|"]
    rows += [f"| {i} | `{name}` | {cell(described.get(name, ''))} |" for i, name in enumerate(columns, 1)]
    return "\n".join(rows)


def placeholders() -> str:
    roles = constant(ROOT / "tokparity" / "zoo" / "manifest.py", "FILE_ROLES")
    described = _toml(HOOKS / "contracts.toml")["file_roles"]
    for role in roles:
        if role not in described:
            warn(f"file role {role!r} (tokparity/zoo/manifest.py FILE_ROLES) is not described in "
                 "docs/_hooks/contracts.toml")
    rows = ["| placeholder | environment variable | replaced by |", "|---|---|---|"]
    for key in (*roles, "name", "python"):
        rows.append(f"| `{{{key}}}` | `TOKPARITY_{key.upper()}` | {cell(described.get(key, ''))} |")
    return "\n".join(rows)


# --- docstrings ---------------------------------------------------------------------------------------


def docstring(relative: str) -> str:
    """A module's docstring as Markdown: reST's ``code`` is already Markdown; a paragraph ending in
    ``::`` introduces an indented block, which Markdown shows as code once the colon is single."""
    path = ROOT / relative
    if not path.is_file():
        warn(f"<!-- generate: docstring {relative} -->: no such file")
        return f"*(missing: `{relative}`)*"
    text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    if not text:
        warn(f"{relative} has no module docstring")
    text = re.sub(r"::$", ":", text, flags=re.MULTILINE)
    # A doctest or an indented block right after a list item would be read as part of the item.
    text = re.sub(r"\n\n(    >>> )", r"\n\n<!-- -->\n\n\1", text)
    return f"*From the docstring of `{relative}`:*\n\n{text}\n"


GENERATORS = {"classes": classes_page, "class-rules": class_rules, "causes": causes_page,
              "cause-order": cause_order, "csv-columns": csv_columns, "placeholders": placeholders}


def block(what: str, arg: str | None, where: str) -> str | None:
    """The Markdown a marker stands for, or None for a marker this hook does not know."""
    if what == "docstring" and arg:
        return docstring(arg)
    if what in GENERATORS and not arg:
        return GENERATORS[what]()
    warn(f"{where}: unknown block <!-- generate: {what}{' ' + arg if arg else ''} -->")
    return None


def expand(markdown: str, where: str = "") -> str:
    """``markdown`` with the block after each marker made again from the files. A marker with no
    end marker before the next marker has no block yet: its block is put right after it."""
    lines = markdown.splitlines(keepends=True)
    out, i, fenced = [], 0, False
    while i < len(lines):
        fenced ^= lines[i].lstrip().startswith("```")  # (a marker shown in a code block is not one)
        m = None if fenced else MARKER.fullmatch(lines[i].rstrip("\n"))
        made = m and block(m.group("what"), m.group("arg"), where)
        if made and any(MARKER.fullmatch(x) or x == END for x in made.splitlines()):
            warn(f"{where}: the block {m.group(0)} would hold a marker line of its own; it is left as it is")
            made = None
        if not m or made is None:
            out.append(lines[i])
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].rstrip("\n") != END and not MARKER.fullmatch(lines[end].rstrip("\n")):
            end += 1
        out += [lines[i], made.rstrip() + "\n", END + "\n"]
        i = end + 1 if end < len(lines) and lines[end].rstrip("\n") == END else i + 1
    return "".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:  # mkdocs hook
    made = expand(markdown, page.file.src_uri)
    if made != markdown:
        warn(f"docs/{page.file.src_uri}: a generated block is stale; run python docs/_hooks/generate.py")
    return made


def pages() -> list[Path]:
    return sorted(p for p in (ROOT / "docs").rglob("*.md") if HOOKS not in p.parents)


def main(argv: list[str] | None = None) -> int:
    """Write every page's generated blocks again (``--check``: list the stale pages, write nothing)."""
    import argparse
    parser = argparse.ArgumentParser(prog="python docs/_hooks/generate.py", description=main.__doc__)
    parser.add_argument("--check", action="store_true", help="list the pages whose blocks are stale; exit 1 if any")
    check = parser.parse_args(argv).check
    logging.basicConfig(format="%(message)s")
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        made = expand(text, str(page.relative_to(ROOT)))
        if made != text:
            stale.append(page.relative_to(ROOT))
            if not check:
                page.write_text(made, encoding="utf-8")
    for name in stale:
        print(f"{name}: {'stale' if check else 'written'}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
