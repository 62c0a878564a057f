"""The run layer's shape, checked on the source: no import cycle between the modules that run and
judge cases (lazy imports inside functions count: a cycle hidden in a function is still one), and
no private name imported from another module (what one module needs of another is public)."""

from __future__ import annotations

import ast
from pathlib import Path

import tokparity

PACKAGE = Path(tokparity.__file__).parent
# The modules that run cases and count verdicts: compare, fuzz, regress, the pytest plugin, the
# process pool and the cluster all go through them.
RUN_LAYER = ("tokparity.run.judge", "tokparity.run.driver", "tokparity.run.parallel", "tokparity.run.cluster", "tokparity.run.journal",
             "tokparity.run.results", "tokparity.regress", "tokparity.pytest_plugin", "tokparity.run.oracle",
             "tokparity.backends.base", "tokparity.backends.runner", "tokparity.backends.registry",
             "tokparity.run.tally", "tokparity.run.options", "tokparity.diagnose.model", "tokparity.corpus",
             "tokparity.fuzz.loop")


def modules() -> dict[str, ast.Module]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = ast.parse(path.read_text("utf-8"), str(path))
    return found


def imported(tree: ast.Module, known: set[str]) -> set[str]:
    """The tokparity modules ``tree`` imports anywhere (top level or inside a function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tokparity"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in known else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` as the modules along it, or [] (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_the_run_layer_has_no_import_cycle():
    trees = modules()
    layer = [m for m in RUN_LAYER if m in trees]
    assert "tokparity.run.driver" in layer and "tokparity.run.parallel" in layer
    graph = {m: imported(trees[m], set(trees)) & set(layer) for m in layer}
    assert find_cycle(graph) == []


def test_the_cycle_finder_finds_the_cycle_compare_parallel_had():
    # (the shape before: compare imported parallel inside _run_compare, parallel compare inside _worker)
    assert find_cycle({"compare": {"parallel", "journal"}, "parallel": {"compare"}, "journal": set()}) == \
        ["compare", "parallel", "compare"]


def test_no_private_name_is_imported_from_another_module():
    trees = modules()
    private = []
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tokparity"):
                for alias in node.names:
                    is_module = f"{node.module}.{alias.name}" in trees  # a private module (generated tables)
                    if alias.name.startswith("_") and not alias.name.startswith("__") and not is_module:
                        private.append(f"{name}: from {node.module} import {alias.name}")
    assert private == []


def test_one_answer_type_and_one_verdict_type():
    from tokparity.backends import base, runner
    from tokparity.records import AGREE, SKIPPED, Verdict
    from tokparity.run.journal.format import read_record, record_json

    trees = modules()
    answer_like = [f"{name}.{node.name}" for name, tree in trees.items() for node in ast.walk(tree)
                   if isinstance(node, ast.ClassDef) and node.name in ("Answer", "_Answer", "Outcome", "CaseResult")
                   and not name.startswith("tokparity.robustness")]
    assert answer_like == ["tokparity.backends.base.Answer"]
    assert runner.ask.__annotations__["return"] == "Answer" and base.Answer.__dataclass_fields__
    record = read_record({"model": "m", "n": 0, "case_id": "c", "corpus": "x", "oracle": "hf",
                                   "verdicts": {"a": "agree", "b": "skipped", "c": ["space-prefix", "k1"]}})
    assert record.verdicts == {"a": AGREE, "b": SKIPPED, "c": Verdict("mismatch", "space-prefix", "k1")}
    assert record_json(record)["verdicts"] == {"a": "agree", "b": "skipped", "c": ["space-prefix", "k1"]}


def test_a_backend_is_registered_once():
    from tokparity.backends.registry import BUILTIN
    from tokparity.run.oracle import TRAINED_IN

    trees = modules()
    # no second table of backends by file role anywhere in the package
    copies = [name for name, tree in trees.items() for node in ast.walk(tree)
              if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in
                                                      ("BACKENDS_BY_FILE", "DEFAULT_BACKENDS") for t in node.targets)]
    assert copies == []
    assert [backend for _, backend, _ in TRAINED_IN] == ["sentencepiece", "hf", "tiktoken", "rwkv"]
    assert {spec.role for spec in BUILTIN.values()} >= {"gguf", "spm_model", "tokenizer_json", "tiktoken",
                                                        "golden_out", "rwkv_vocab", None}


def test_one_tally_counts_for_every_runner():
    """Counting is ``Tally.apply`` alone: the judge (ModelRun) holds no summaries, and every runner
    (one process, the --jobs parent and the Ray driver through ModelLedger, fuzz, regress, the
    pytest plugin) calls a tally's apply."""
    from tokparity.run.judge import ModelRun
    from tokparity.run.ledger import ModelLedger

    assert not any(hasattr(ModelRun, name) for name in ("apply", "ledger", "finish", "summaries", "diagnose_all"))
    assert ModelLedger.ledger.fget.__annotations__["return"] == "Tally"
    trees = modules()
    counting = sorted({name for name, tree in trees.items() for node in ast.walk(tree)
                       if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                       and node.func.attr == "apply" and ast.unparse(node.func.value).endswith(("tally", "ledger"))})
    assert counting == ["tokparity.fuzz.loop", "tokparity.run.parallel", "tokparity.pytest_plugin", "tokparity.regress",
                        "tokparity.run.driver"]
    counters = [f"{name}.{node.name}" for name, tree in trees.items() for node in ast.walk(tree)
                if isinstance(node, ast.ClassDef) and any(isinstance(f, ast.FunctionDef) and f.name == "apply"
                                                          for f in node.body)]
    assert counters == ["tokparity.run.tally.Tally"]
