"""``tokparity inspect MODEL|FILE``: what a tokenizer file says, checked before anything runs.

The Gemma 3 write-up found its bug by reading token ids; half of it could have been read off the
file first (its add_space_prefix, its byte pieces, its 262k tokens). This prints exactly that:
algorithm, pre-tokenizer, vocab size, token types, special ids with their text, flags, charsmap
size, merges and the fingerprint. A model with several files (a GGUF and a tokenizer.json)
gets one block per file and a line saying whether they hold the same vocabulary.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from tokparity.errors import TokparityError
from tokparity.textview import single_line
from tokparity.vocab import Vocab, load_vocab
from tokparity.vocab.model import FLAG_NAMES

VOCAB_ROLES = ("gguf", "spm_model", "tokenizer_json", "tiktoken", "rwkv_vocab")


def add_parser(sub) -> None:
    p = sub.add_parser("inspect", help="what a tokenizer file says: algorithm, flags, specials, fingerprint",
                       description="Show what a tokenizer file says. MODEL is a zoo name, a .gguf, a .model, "
                                   "a tokenizer.json, a folder, or hf:ORG/NAME.")
    p.add_argument("models", nargs="*", metavar="MODEL")
    p.add_argument("--all", action="store_true", help="every zoo model (fetched as needed)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def describe(vocab: Vocab, role: str) -> dict:
    """Everything ``inspect`` reports about one file, as plain data."""
    specials = {role_: {"id": i, "text": text} for role_, (i, text) in vocab.special_tokens().items()}
    return {
        "file": vocab.source,
        "role": role,
        "format": vocab.source_format,
        "bytes": os.path.getsize(vocab.source),
        "algorithm": vocab.algorithm,
        "ggml_model": vocab.extra.get("tokenizer.ggml.model"),
        "hf_model_type": vocab.extra.get("model_type") if vocab.source_format == "hf-json" else None,
        "pre_tokenizer": vocab.pre_tokenizer,
        "vocab_size": vocab.size,
        "token_types": vocab.type_counts(),
        "special_ids": specials,
        "flags": vocab.flags.as_dict(),
        "precompiled_charsmap_bytes": len(vocab.precompiled_charsmap) if vocab.precompiled_charsmap else 0,
        "normalizer": vocab.extra.get("normalizer_name"),
        "merges": vocab.merges_count,
        "has_scores": vocab.scores is not None,
        "chat_template_chars": len(vocab.chat_template) if vocab.chat_template else 0,
        "fingerprint": vocab.fingerprint,
    }


def inspect_model(spec: str) -> dict:
    from tokparity.run.oracle import choose_oracle
    from tokparity.zoo import resolve_model

    model = resolve_model(spec)
    roles = sorted((r for r in VOCAB_ROLES if r in model.files), key=lambda r: r in model.derived)  # originals first
    vocabs = [(role, load_vocab(model.files[role])) for role in roles]
    if not vocabs:
        raise TokparityError(f"{spec}: no tokenizer file (.gguf, .model, tokenizer.json or rwkv_vocab*.txt) found")
    result: dict[str, Any] = {"model": model.name, "origin": model.origin, "description": model.description,
              "files": [describe(v, role) for role, v in vocabs]}
    for f in result["files"]:  # a file tokparity converted is labelled as such, with what it lost
        d = model.derived.get(f["role"])
        f["derived"] = None if d is None else {"from": d.from_role, "converter": d.converter,
                                               "not_carried": list(d.warnings)}
    result["chat_template"] = _chat_template(model)
    oracle = choose_oracle(model)
    result["oracle"] = {"chain": list(oracle.chain), "why": oracle.why}
    if model.missing:
        result["missing"] = model.missing
    if len(vocabs) > 1:
        (ra, a), (rb, b) = vocabs[0], vocabs[1]
        comparison = a.compare(b)
        result["same_vocabulary"] = {"files": [ra, rb], "same": comparison.same, "summary": comparison.summary()}
    return result


def _chat_template(model) -> dict | None:
    """The template ``--ops chat`` renders for this model (a file of its own, transformers' files or the
    GGUF's), or None; a template file that cannot be read is its error, so inspect still shows the rest."""
    from tokparity.chat.template import find_template

    try:
        found = find_template(model)
    except TokparityError as e:
        return {"error": str(e)}
    if found is None:
        return None
    return {"source": found.source, "chars": {name: len(text) for name, text in sorted(found.templates.items())}}


def _fmt_flag(v: bool | None) -> str:
    return "–" if v is None else str(v).lower()


def render_text(info: dict) -> str:
    lines = [f"{info['model']}" + (f"  ({info['description']})" if info.get("description") else "")]
    for f in info["files"]:
        model_kind = f["ggml_model"] and f"tokenizer.ggml.model={f['ggml_model']}" or f["hf_model_type"] or ""
        types = " · ".join(f"{name} {n:,}" for name, n in f["token_types"].items())
        specials = " · ".join(f"{r} {s['id']} {s['text']!r}" if s["text"] is not None else f"{r} {s['id']} (out of range!)"
                              for r, s in f["special_ids"].items()) or "–"
        flags = "  ".join(f"{name}={_fmt_flag(f['flags'][name])}" for name in FLAG_NAMES)
        rows = [
            ("file", f"{f['file']} ({f['format']}, {f['bytes']:,} bytes)"),
            ("algorithm", f"{f['algorithm']}" + (f" ({model_kind})" if model_kind else "")),
            ("pre-tokenizer", f["pre_tokenizer"] or "–"),
            ("vocab size", f"{f['vocab_size']:,}"),
            ("token types", types),
            ("special ids", specials),
            ("flags", flags),
            ("charsmap", f"{f['precompiled_charsmap_bytes']:,} bytes" + (f" ({f['normalizer']})" if f["normalizer"] else "")
             if f["precompiled_charsmap_bytes"] else "–"),
            ("merges", f"{f['merges']:,}"),
            ("scores", "yes" if f["has_scores"] else "no"),
            ("chat template", f"{f['chat_template_chars']:,} chars" if f["chat_template_chars"] else "–"),
            ("fingerprint", f["fingerprint"]),
        ]
        d = f.get("derived")
        if d is None:
            lines.append(f"  [{f['role']}]")
        else:
            lines.append(f"  [{f['role']}] DERIVED: built by tokparity convert {d['converter']} from the "
                         f"{d['from']}, not an original file")
            rows += [("not carried", w) for w in d["not_carried"]] or [("not carried", "nothing")]
        lines += [f"    {k:<14} {v}" for k, v in rows]
    if "same_vocabulary" in info:
        s = info["same_vocabulary"]
        lines.append(f"  {' vs '.join(s['files'])}: {s['summary']}")
    for role, why in info.get("missing", {}).items():
        lines.append(f"  {role}: {why}")
    if "chat_template" in info:
        t = info["chat_template"]
        shown = ("–" if t is None else t["error"] if "error" in t else
                 t["source"] + " (" + ", ".join(f"{name} {n:,} chars" for name, n in t["chars"].items()) + ")")
        lines.append(f"  chat template (--ops chat): {shown}")
    if "oracle" in info:
        lines.append(f"  oracle: {'/'.join(info['oracle']['chain'])}: {info['oracle']['why']}")
    # (paths, token texts and names come from files: a control character is spelled out, not obeyed)
    return "\n".join(single_line(line) for line in lines)


def run(args: argparse.Namespace) -> int:
    from tokparity.commands.arguments import model_specs

    specs = model_specs(args.models, args.all, "inspect")
    results = []
    for spec in specs:
        info = inspect_model(spec)
        results.append(info)
        if not args.json:
            print(render_text(info), flush=True)
            if len(specs) > 1:
                print()
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 and not args.all else results, indent=1, ensure_ascii=False))
    return 0
