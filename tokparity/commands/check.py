"""``tokparity check MODEL…|--all``: what a model's files must hold, checked without an engine
under test (tokparity/checks). Exit 1 when a property is broken, 2 on a file that cannot be read."""

from __future__ import annotations

import argparse
import json

from tokparity.checks import MARKED, PROPERTIES, ModelCheck
from tokparity.errors import TokparityError
from tokparity.textview import single_line


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="what a model's files must hold: where generation ends, vocabulary size, "
                                     "multi-turn ids, round trips",
                       description="Check what a model's files must hold, with no engine under test: the ids "
                                   "that end a generation, the vocabulary's size, whether a turn's ids start the next turn's "
                                   "prompt, and whether decode(encode(text)) gives the text back. MODEL is a zoo name, a "
                                   "file, a folder or hf:ORG/NAME. Exit 0 when every property checked holds, 1 when "
                                   "one is broken, 2 on a file that cannot be read or when nothing could be checked.")
    p.add_argument("models", nargs="*", metavar="MODEL")
    p.add_argument("--all", action="store_true", help="every zoo model (fetched as needed)")
    p.add_argument("--only", action="append", choices=PROPERTIES, metavar="PROPERTY",
                   help=f"check only this property (repeatable): {', '.join(PROPERTIES)}")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def render_text(result: ModelCheck) -> str:
    said = "✗ broken" if result.broken else "✓ every property checked holds" if result.checked else "nothing checked"
    lines = [f"{result.model}: {said}"]
    for p in result.properties:
        lines.append(f"  {p.name:<18} {MARKED[p.status]}" + (f" ({p.why})" if p.why else ""))
        lines += [f"    {fact}" for fact in p.facts]
        for f in p.findings:
            lines.append(f"    {'✗' if f.broken else '·'} {f.said}")
            lines.append(f"      where: {f.where}")
            if f.example:
                lines.append(f"      example: {f.example}")
    # (token texts and paths come from files: a control character is spelled out, not obeyed)
    return "\n".join(single_line(line) for line in lines)


def render_table(results: list[ModelCheck], properties: tuple[str, ...]) -> str:
    width = max(len("model"), *(len(r.model) for r in results))
    lines = [f"{'model':<{width}}  " + "  ".join(f"{p:<18}" for p in properties)]
    for r in results:
        status = {p.name: MARKED[p.status] for p in r.properties}
        lines.append(f"{r.model:<{width}}  " + "  ".join(f"{status.get(p, '–'):<18}" for p in properties))
    return "\n".join(single_line(line) for line in lines)


def run(args: argparse.Namespace) -> int:
    from tokparity.commands.arguments import model_specs
    from tokparity.run.model_checks import check_model

    specs = model_specs(args.models, args.all, "check")
    properties = tuple(p for p in PROPERTIES if not args.only or p in args.only)
    results = []
    for spec in specs:
        result = check_model(spec, properties)
        results.append(result)
        if not args.json:
            print(render_text(result), flush=True)
            print()
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=1, ensure_ascii=False))
    elif len(results) > 1:
        print(render_table(results, properties))
    if not any(r.checked for r in results):  # (nothing checked is no green run)
        raise TokparityError(f"nothing checked: no property of {', '.join(properties)} could be checked on "
                             f"{'these models' if len(results) > 1 else results[0].model}; the lines above say why")
    return 1 if any(r.broken for r in results) else 0
