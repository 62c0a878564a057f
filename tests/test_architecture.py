"""The package's shape, checked on the source: every module imports only its own layer or a lower
one (``LAYERS``), there is no import cycle anywhere in the package (lazy imports inside functions
count: a cycle hidden in a function is still one), and no private name is imported from another
module (what one module needs of another is public)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tokparity

PACKAGE = Path(tokparity.__file__).parent

# The layers of the package, lowest first. A module imports only modules of its own layer or of a
# lower one: at the top, inside a function or under TYPE_CHECKING alike (none of those needs an
# exception), and by name too (a "tokparity.x:Name" string that importlib loads, as the backend
# registry and the converters' table do). An entry names a module and every module under it; a
# module's layer is that of its longest entry ("tokparity", the package's own __init__, names only
# itself).
LAYERS: list[tuple[str, list[str]]] = [
    ("base", ["tokparity", "tokparity.errors", "tokparity.textview", "tokparity.child_python", "tokparity.memo",
              "tokparity.whole_files", "tokparity.stops"]),
    ("vocab", ["tokparity.components", "tokparity.vocab"]),
    ("reference", ["tokparity.reference"]),
    # the files a run reads: models (pinned, fetched, trained, converted) and corpora
    # and conversations with the templates their files carry (rendered only in the sandbox's child)
    ("inputs", ["tokparity.convert", "tokparity.zoo", "tokparity.corpus", "tokparity.chat"]),
    ("backends", ["tokparity.backends"]),
    # the chat reference: the sandbox is a child process, as a backend's is
    ("chat reference", ["tokparity.chat.sandbox", "tokparity.chat.reference"]),
    # what a model's files must hold, read in them and in the libraries that read them
    ("checks", ["tokparity.checks"]),
    ("diff", ["tokparity.diff"]),  # symptoms: where two answers differ, and the bug class
    # the records a judged case passes through (Judgement, Diagnosis, RootCause, Decision, Mismatch)
    ("records", ["tokparity.records"]),
    ("diagnose", ["tokparity.diagnose"]),  # causes, by reproduction
    # judge, tally, decide, the ledger, the drivers (one process, --jobs, Ray), the journal, the results
    ("run", ["tokparity.run"]),
    ("fuzz, regress", ["tokparity.fuzz", "tokparity.regress"]),
    ("report", ["tokparity.report"]),
    ("commands", ["tokparity.commands", "tokparity.cli", "tokparity.start", "tokparity.__main__",
                  "tokparity.pytest_plugin"]),
]


def modules() -> dict[str, ast.Module]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = ast.parse(path.read_text("utf-8"), str(path))
    return found


BY_NAME = re.compile(r"(tokparity(?:\.\w+)+):\w+")  # "tokparity.backends.ref:RefBackend"


def imported(tree: ast.Module, known: set[str], package: str = "") -> set[str]:
    """The tokparity modules ``tree`` imports anywhere: at the top or inside a function, imports
    relative to ``package`` (the one the module is in) resolved, and "module:attribute" strings,
    which importlib loads by name."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.rsplit(".", node.level - 1)[0]
                module = f"{base}.{module}" if module else base
            if module == "tokparity" or module.startswith("tokparity."):
                for alias in node.names:
                    sub = f"{module}.{alias.name}"
                    out.add(sub if sub in known else module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (m := BY_NAME.fullmatch(node.value)):
            out.update({m.group(1)} & known)
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


def layer_of(module: str) -> int | None:
    """The index in LAYERS of ``module``'s layer (that of its longest entry), or None."""
    found = [(len(entry), index) for index, (_, entries) in enumerate(LAYERS) for entry in entries
             if module == entry or (entry != "tokparity" and module.startswith(entry + "."))]
    return max(found)[1] if found else None


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    trees = modules()
    graph = {}
    for name, tree in trees.items():
        is_package = any(other.startswith(name + ".") for other in trees)
        graph[name] = imported(tree, set(trees), name if is_package else name.rpartition(".")[0]) - {name}
    return graph


def test_every_module_has_a_layer():
    assert [m for m in sorted(modules()) if layer_of(m) is None] == []


def test_every_entry_of_the_layer_table_is_a_module():
    trees = modules()
    assert [e for _, entries in LAYERS for e in entries if e not in trees] == []


def test_every_import_goes_to_the_same_layer_or_a_lower_one():
    upward = []
    for module, targets in sorted(import_graph().items()):
        here = layer_of(module)
        for target in sorted(targets):
            there = layer_of(target)
            if here is not None and there is not None and there > here:
                upward.append(f"{module} ({LAYERS[here][0]}) imports {target} ({LAYERS[there][0]})")
    assert upward == []


def test_the_package_imports_nothing_from_the_repository_around_it():
    """tools/, tests/ and benchmarks/ are not installed with the package: it never imports them."""
    outside = []
    for name, tree in sorted(modules().items()):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found = [node.module or ""]
            else:
                continue
            outside += [f"{name}: {n}" for n in found if n.split(".")[0] in ("tools", "tests", "benchmarks")]
    assert outside == []


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert "tokparity.run.driver" in graph and "tokparity.backends.registry" in graph
    assert find_cycle(graph) == []


def test_the_import_walker_sees_lazy_relative_and_by_name_imports():
    known = {"tokparity.a", "tokparity.a.b", "tokparity.a.c", "tokparity.d"}
    tree = ast.parse("def f():\n    from . import c\n    from tokparity.d import x\n"
                     "T = {'b': 'tokparity.a.b:Thing', 'doc': 'not tokparity.d: a sentence'}\n")
    assert imported(tree, known, package="tokparity.a") == {"tokparity.a.b", "tokparity.a.c", "tokparity.d"}
    assert layer_of("tokparity.diagnose.model") == layer_of("tokparity.diagnose.search") < layer_of("tokparity.run.judge")
    assert layer_of("tokparity") == 0 and layer_of("tokparity.nothing") is None


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
                   if isinstance(node, ast.ClassDef) and node.name in ("Answer", "_Answer", "Outcome", "CaseResult")]
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


# The steps a case goes through (tokparity.run.pipeline), each a module of its own.
STEPS = ("tokparity.run.judge", "tokparity.diagnose.model", "tokparity.run.decide", "tokparity.run.tally")
# Who runs cases: compare (in this process, its --jobs workers, Ray), regress, fuzz, the pytest plugin.
CALLERS = ("tokparity.commands", "tokparity.regress", "tokparity.fuzz", "tokparity.pytest_plugin",
           "tokparity.run.driver", "tokparity.run.parallel", "tokparity.run.cluster", "tokparity.run.ledger")


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_every_caller_reaches_the_steps_through_the_pipeline():
    """compare, regress, fuzz and the plugin import no step's module: they call tokparity.run.pipeline,
    which alone calls the steps in turn. And no step imports another step's module sideways."""
    graph = import_graph()
    callers = [name for name in graph if _under(name, CALLERS)]
    assert len(callers) > 20  # (the list above still names the callers)
    assert sorted(f"{name} -> {step}" for name in callers for step in graph[name] & set(STEPS)) == []
    assert sorted(f"{step} -> {other}" for step in STEPS for other in graph[step] & set(STEPS)) == []
    uses = sorted(name for name in callers if "tokparity.run.pipeline" in graph[name])
    assert uses == ["tokparity.fuzz.chats", "tokparity.fuzz.ids", "tokparity.fuzz.loop", "tokparity.pytest_plugin",
                    "tokparity.regress", "tokparity.run.cluster", "tokparity.run.driver", "tokparity.run.ledger",
                    "tokparity.run.parallel"]


def test_one_tally_counts_for_every_runner():
    """Counting is ``Tally.apply`` alone, called by the pipeline alone: the judge (ModelRun) holds no
    summaries and makes no tally, and every runner counts through ``tokparity.run.pipeline``."""
    from tokparity.run.judge import ModelRun
    from tokparity.run.ledger import ModelLedger

    assert not any(hasattr(ModelRun, name) for name in ("apply", "ledger", "finish", "summaries", "diagnose_all",
                                                        "tally", "diagnosis"))
    assert ModelLedger.ledger.fget.__annotations__["return"] == "Tally"
    trees = modules()
    counting = sorted({name for name, tree in trees.items() for node in ast.walk(tree)
                       if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                       and node.func.attr == "apply" and ast.unparse(node.func.value).endswith(("tally", "ledger"))})
    assert counting == ["tokparity.run.pipeline"]
    counters = [f"{name}.{node.name}" for name, tree in trees.items() for node in ast.walk(tree)
                if isinstance(node, ast.ClassDef) and any(isinstance(f, ast.FunctionDef) and f.name == "apply"
                                                          for f in node.body)]
    assert counters == ["tokparity.run.tally.Tally"]


def test_the_records_of_a_case_are_made_once():
    """Every record a case passes through is frozen (a step makes a new one, never changes one it was
    given), and the row's class, cause and known divergence are decided in one function, which only
    the pipeline calls (at the end of a model, and case by case for fuzz)."""
    import dataclasses

    from tokparity import records

    kinds = [records.Verdict, records.Judgement, records.Diagnosis, records.RootCause, records.Decision,
             records.Mismatch, records.CaseRecord]
    assert all(dataclasses.is_dataclass(k) and k.__dataclass_params__.frozen for k in kinds)  # type: ignore[attr-defined]
    callers = sorted({name for name, tree in modules().items() for node in ast.walk(tree)
                      if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "decide"})
    assert callers == ["tokparity.run.pipeline"]


def test_the_records_are_frozen_all_the_way_down():
    """A record's lists and mappings cannot be changed either: the judge hands it lists and dicts,
    and it keeps tuples and FrozenDicts. The counts are made once (a RunSummary), and a known
    divergence stays as its file says it (the list counts the hits). Pickled, as workers and Ray
    actors send them, they stay so."""
    import dataclasses
    import pickle

    import pytest

    from tokparity.records import AGREE, CaseRecord, Diagnosed, FrozenDict, Judgement, Verdict
    from tokparity.run.known import KnownDivergence
    from tokparity.run.results import RunSummary

    tags, ids = {"kind": "space"}, [1, 2]
    j = Judgement("m", "edge", "c1", tags, "ref", "mine", "space-prefix", "…", "model", 0, " a", ids, [3],
                  ["▁a"], ["▁", "a"], [["ref"], ["mine"]], oracle_output=["x"])
    tags["kind"], ids[0] = "changed", 99  # (the caller's own lists and dicts: the record kept copies)
    assert j.tags == {"kind": "space"} and j.oracle_ids == (1, 2) and j.partition == (("ref",), ("mine",))
    record = CaseRecord("m", 0, "c1", "edge", "ref", ["corpus=edge"], {"ref": AGREE, "mine": Verdict.differs("x")},
                        [j], seconds={"mine": 0.5})
    summary = RunSummary("m", "ref", "mine", classes={"space-prefix": 1}, not_applicable_cases=["edge/c2"])
    for mapping in (j.tags, record.verdicts, record.causes, record.seconds, Diagnosed().root_causes,
                    summary.classes, summary.causes, pickle.loads(pickle.dumps(j)).tags):
        assert type(mapping) is FrozenDict
        with pytest.raises(TypeError):
            mapping["x"] = 1  # type: ignore[index]
        with pytest.raises(TypeError):
            mapping.update({"x": 1})  # type: ignore[attr-defined]
    assert all(type(v) is tuple for v in (j.backend_pieces, j.oracle_output, record.judgements, record.tally,
                                           summary.not_applicable_cases))
    assert pickle.loads(pickle.dumps(record)) == record
    for kind in (RunSummary, KnownDivergence, Diagnosed):
        assert kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.unexplained += 1  # type: ignore[misc]


def test_every_exception_class_is_in_the_errors_module():
    """One module holds every exception of the package (``tokparity/errors.py``); a class private to
    one module (``_Died``), raised and caught there, may stay where it is."""
    found = modules()
    errors = {node.name for node in found["tokparity.errors"].body if isinstance(node, ast.ClassDef)}
    elsewhere = []
    for name, tree in found.items():
        if name == "tokparity.errors":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and any(
                    (b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "") in
                    errors | {"Exception", "BaseException", "ValueError", "TypeError", "RuntimeError", "TimeoutError",
                              "KeyError", "LookupError", "OSError"} for b in node.bases):
                elsewhere.append(f"{name}.{node.name}")
    assert elsewhere == [], f"exception classes outside tokparity/errors.py: {elsewhere}"


def test_no_module_is_over_600_lines():
    """A module a person reads holds one concept, in at most 600 lines. The generated Unicode tables
    are data, not code to read: their docstring says GENERATED and names the script that makes them."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text("utf-8")
        if text.count("\n") > 600 and not text.startswith('"""GENERATED by '):
            long.append(f"{path.relative_to(PACKAGE.parent)}: {text.count(chr(10))} lines")
    assert long == []
