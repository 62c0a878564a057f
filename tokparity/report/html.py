"""report.html: one self-contained page (inline CSS and JS, no network, works from file://).

Layout and style live in ``templates/``; this module turns ``Results`` into escaped HTML
fragments and fills the page. Every string that comes from a corpus, an engine or a tokenizer
file goes through ``esc`` (corpus text is untrusted: ``<script>`` must show as text).
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from importlib import resources
from string import Template

from tokparity.diff.align import align
from tokparity.diff.explain import class_info
from tokparity.results import Mismatch, Results
from tokparity.textview import visible

MAX_CASES = 2000  # the HTML shows this many mismatches; mismatches.csv has them all


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _template(name: str) -> str:
    return resources.files("tokparity.report").joinpath("templates", name).read_text("utf-8")


def _pieces(pieces: list[str], ids: list[int], start: int = 0) -> str:
    spans = []
    for k, (p, i) in enumerate(zip(pieces, ids)):
        spans.append(f'<span class="piece t{(start + k) % 2}" title="{esc(i)}">{esc(visible(p))}</span>')
    return "".join(spans)


def _ids(ids: list[int]) -> str:
    return f'<span class="ids">{esc(ids)}</span>'


def aligned_table(m: Mismatch) -> str:
    """Both id lists aligned as the classifier aligned them: equal runs once, differing runs
    side by side."""
    rows = [f"<tr><th>oracle: {esc(m.oracle)}</th><th>backend: {esc(m.backend)}</th></tr>"]
    ops = align(m.oracle_ids, m.backend_ids).opcodes
    for tag, i1, i2, j1, j2 in ops:
        a_ids, b_ids = m.oracle_ids[i1:i2], m.backend_ids[j1:j2]
        a_p, b_p = m.oracle_pieces[i1:i2], m.backend_pieces[j1:j2]
        if tag == "equal" and len(a_ids) > 6:  # keep context short: first and last two
            cell = (f"{_pieces(a_p[:2], a_ids[:2], i1)} <span class='muted'>… {len(a_ids) - 4} equal …</span> "
                    f"{_pieces(a_p[-2:], a_ids[-2:], i2 - 2)}")
            rows.append(f'<tr class="equal"><td colspan="2">{cell}</td></tr>')
            continue
        css = "equal" if tag == "equal" else "diff"
        rows.append(f'<tr class="{css}"><td>{_ids(a_ids)}<br>{_pieces(a_p, a_ids, i1)}</td>'
                    f'<td>{_ids(b_ids)}<br>{_pieces(b_p, b_ids, j1)}</td></tr>')
    return '<table class="align">' + "".join(rows) + "</table>"


def _case(m: Mismatch) -> str:
    tags = " ".join(f"{k}={v}" for k, v in sorted(m.tags.items()))
    known = f' <span class="badge known">known: {esc(m.known)}</span>' if m.known else ""
    partition = ""
    if m.partition and len(m.partition) > 1:
        groups = " vs ".join("{" + ", ".join(esc(b) for b in g) + "}" for g in m.partition)
        partition = f'<p class="muted">agreement: {groups}</p>'
    return (
        f'<div class="case" data-model="{esc(m.model)}" data-backend="{esc(m.backend)}" data-cls="{esc(m.cls)}" '
        f'data-tags="{esc(tags)}">'
        f"<h3>{esc(m.model)} · {esc(m.backend)} vs {esc(m.oracle)} · <span class='badge cls'>{esc(m.cls)}</span>{known}"
        f" <span class='muted'>{esc(m.corpus)}/{esc(m.case_id)}, stage: {esc(m.stage)}, first diff at token "
        f"{esc(m.first_diff)}</span></h3>"
        f'<p class="evidence">{esc(m.evidence)}</p>'
        f'<div class="text">{esc(visible(m.text))}</div>{partition}{aligned_table(m)}</div>'
    )


def summary_matrix(results: Results) -> str:
    backends = sorted({r.backend for r in results.runs})
    models = list(dict.fromkeys(r.model for r in results.runs))
    by = {(r.model, r.backend): r for r in results.runs}
    head = "<tr><th>model</th>" + "".join(f"<th>{esc(b)}</th>" for b in backends) + "</tr>"
    rows = []
    for model in models:
        oracle = next(r.oracle for r in results.runs if r.model == model)
        cells = []
        for b in backends:
            r = by.get((model, b))
            if r is None:
                cells.append("<td class='muted'>–</td>")
                continue
            status = "ok" if r.unexplained == 0 else "bad"
            classes = ", ".join(f"{esc(c)} {n}" for c, n in sorted(r.classes.items(), key=lambda x: -x[1]))
            skipped = f"<br><span class='muted'>{r.skipped} without golden ids</span>" if r.skipped else ""
            cells.append(f"<td><span class='{status}'>{r.mismatches} / {r.cases}</span>"
                         f"{' (' + str(r.mismatches - r.unexplained) + ' known)' if r.mismatches != r.unexplained else ''}"
                         f"<br><span class='muted'>{classes}</span>{skipped}</td>")
        rows.append(f"<tr><th>{esc(model)}<br><span class='muted'>oracle: {esc(oracle)}</span></th>{''.join(cells)}</tr>")
    return (f"<p>Cells show mismatches / cases against the model's oracle, and the classes found.</p>"
            f"<table>{head}{''.join(rows)}</table>")


def tag_table(results: Results, top: int = 40) -> str:
    rates = sorted(results.tag_rates.items(), key=lambda kv: (-kv[1]["mismatches"] / max(1, kv[1]["cases"]), kv[0]))
    rates = [(k, v) for k, v in rates if v["cases"]][:top]
    if not rates:
        return "<p class='muted'>No tagged cases.</p>"
    rows = "".join(f"<tr><td>{esc(k)}</td><td class='num'>{v['cases']}</td><td class='num'>{v['mismatches']}</td>"
                   f"<td class='num'>{100 * v['mismatches'] / v['cases']:.1f} %</td></tr>" for k, v in rates)
    bar_h, width, label_w = 16, 360, 170
    bars = []
    for n, (k, v) in enumerate(rates):
        rate = v["mismatches"] / v["cases"]
        y = n * (bar_h + 4)
        bars.append(f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end">{esc(k[:28])}</text>'
                    f'<rect x="{label_w}" y="{y}" width="{max(1.0, rate * width):.1f}" height="{bar_h}" '
                    f'fill="{"#cf222e" if rate else "#1a7f37"}"><title>{esc(k)}: {rate:.1%}</title></rect>'
                    f'<text x="{label_w + max(1.0, rate * width) + 4:.1f}" y="{y + 12}">{rate:.1%}</text>')
    svg = (f'<svg class="chart" width="{label_w + width + 60}" height="{len(rates) * (bar_h + 4)}" '
           f'role="img" aria-label="mismatch rate per tag">{"".join(bars)}</svg>')
    return (f"<table><tr><th>tag</th><th>case runs</th><th>mismatches</th><th>rate</th></tr>{rows}</table>{svg}")


def most_telling(mismatches: list[Mismatch]) -> Mismatch:
    """A case of the commonest class, the shortest text that still shows it."""
    top_class = Counter(m.cls for m in mismatches).most_common(1)[0][0]
    candidates = [m for m in mismatches if m.cls == top_class]
    return min(candidates, key=lambda m: (len(m.text) < 3, len(m.text), m.case_id))


def root_cause(results: Results) -> str:
    groups: dict[tuple[str, str], list[Mismatch]] = defaultdict(list)
    for m in results.mismatches:
        groups[(m.model, m.backend)].append(m)
    if not groups:
        return "<p class='ok'>Every backend agrees with its oracle on every case.</p>"
    parts = []
    for (model, backend), ms in groups.items():
        oracle = ms[0].oracle
        counts = Counter(m.cls for m in ms).most_common()
        rows = "".join(f"<tr><td><span class='badge cls'>{esc(c)}</span></td><td class='num'>{n}</td>"
                       f"<td>{esc(class_info(c)['symptom'])}</td><td>{esc(class_info(c)['implication'])}</td></tr>"
                       for c, n in counts)
        t = most_telling(ms)
        parts.append(
            f"<h3>{esc(model)}: {esc(backend)} against {esc(oracle)}</h3>"
            f"<table><tr><th>class</th><th>cases</th><th>symptom</th><th>→ implication</th></tr>{rows}</table>"
            f"<p>Most telling case ({esc(t.corpus)}/{esc(t.case_id)}): <span class='text'>{esc(visible(t.text))}</span></p>"
            f"<table class='writeup'><tr><th>{esc(oracle)} (oracle)</th><td>{esc(t.oracle_ids)}</td></tr>"
            f"<tr><th>{esc(backend)}</th><td>{esc(t.backend_ids)}</td></tr></table>"
            f"<p class='evidence'>{esc(t.evidence)}</p>{aligned_table(t)}"
        )
    return "".join(parts)


def _filters(results: Results) -> str:
    def select(name: str, label: str, values) -> str:
        options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in sorted(set(values)))
        return f'<label>{label} <select name="{name}"><option value="">all</option>{options}</select></label>'
    ms = results.mismatches
    tags = {f"{k}={v}" for m in ms for k, v in m.tags.items()}
    return (select("model", "model", (m.model for m in ms)) + select("backend", "backend", (m.backend for m in ms))
            + select("cls", "class", (m.cls for m in ms)) + select("tag", "tag", tags))


def render(results: Results) -> str:
    shown = results.mismatches[:MAX_CASES]
    more = len(results.mismatches) - len(shown)
    cases = "".join(_case(m) for m in shown) or "<p class='ok'>No mismatches.</p>"
    if more:
        cases += f"<p class='muted'>{more} more mismatches are in mismatches.csv.</p>"
    backends = ", ".join(f"{esc(name)} {esc(info.get('version', '?'))}" for name, info in results.backends.items())
    header = (f"<p>tokparity {esc(results.tokparity)} · backends: {backends} · "
              f"{len(results.mismatches)} mismatches, {results.unexplained} unexplained · "
              f"{results.seconds:.1f} s</p>")
    for entry in results.known.get("stale", []):
        header += (f"<p class='bad'>⚠ stale known divergence {esc(entry['id'])} ({esc(entry['source'])}): it matched "
                   "nothing in this run; the upstream difference may be fixed — remove or correct the entry.</p>")
    if results.known.get("used"):
        header += "<p class='muted'>Known divergences (reported, not failing): " + ", ".join(
            f"{esc(k)} {n}" for k, n in results.known["used"].items()) + "</p>"
    page = Template(_template("report.html"))
    return page.substitute(
        title="tokparity report",
        css=_template("report.css"),
        js=_template("report.js"),
        header=header,
        summary=summary_matrix(results),
        rootcause=root_cause(results),
        tags=tag_table(results),
        filters=_filters(results),
        cases=cases,
    )
