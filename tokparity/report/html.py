"""report.html: one self-contained page (inline CSS and JS, no network, works from file://).

The page shell, its style and its script live in ``templates/``; ``render(results)`` fills the
shell with build.py's page view, each node laid out as HTML by ``block``. Every string that
comes from a corpus, an engine or a tokenizer file goes through ``esc`` (corpus text is
untrusted: ``<script>`` must show as text).
"""

from __future__ import annotations

import html
from importlib import resources
from string import Template

from tokparity.report import nodes as n
from tokparity.report.build import PAGE, build
from tokparity.run.results import Results

# How each style of inline text is marked up (the tones are CSS classes).
_SPANS = {n.CLASS: "<span class='badge cls'>{}</span>", n.KNOWN: '<span class="badge known">{}</span>',
          n.TEXT: "<span class='text'>{}</span>", n.CODE: "<code>{}</code>", n.STRONG: "<strong>{}</strong>",
          n.MUTED: "<span class='muted'>{}</span>", n.OK: "<span class='ok'>{}</span>",
          n.BAD: "<span class='bad'>{}</span>", n.CAUSES: "<span class='causes'>{}</span>"}
_TONES = {"lead": "sentence"}  # a paragraph's tone → its class, where the two differ


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _template(name: str) -> str:
    return resources.files("tokparity.report").joinpath("templates", name).read_text("utf-8")


def inline(runs: n.Inline) -> str:
    out = []
    for r in runs:
        if r.style == n.BREAK:
            out.append("<br>")
            continue
        text = _SPANS.get(r.style, "{}").format(esc(r.text))
        out.append(f'<span title="{esc(r.note)}">{text}</span>' if r.note else text)
    return "".join(out)


def page(doc: n.Document) -> str:
    """The page: the template's shell around the document's header and sections."""
    return Template(_template("report.html")).substitute(
        title="tokparity report", css=_template("report.css"), js=_template("report.js"),
        header="".join(block(b) for b in doc.header),
        sections="\n".join(f'<section id="{esc(s.name)}">\n' + (f"<h2>{esc(s.title)}</h2>\n" if s.title else "")
                           + "".join(block(b) for b in s.blocks) + "\n</section>" for s in doc.sections))


def block(b: n.Block, level: int = 3) -> str:
    if isinstance(b, n.Paragraph):
        tone = _TONES.get(b.tone, b.tone)
        return f'<p class="{esc(tone)}">{inline(b.runs)}</p>' if tone else f"<p>{inline(b.runs)}</p>"
    if isinstance(b, n.Title):
        return f"<p class='verdict {'ok' if b.ok else 'bad'}'>tokparity {esc(b.version)}: {esc(b.text)}</p>"
    if isinstance(b, n.Fields):
        return ("<table class='symptom'>" + "".join(f"<tr><th>{esc(label)}</th><td>{inline(text)}</td></tr>"
                                                   for label, text in b.rows) + "</table>")
    if isinstance(b, n.Table):
        return table(b)
    if isinstance(b, n.Items):
        return "<ul>" + "".join(f"<li>{inline(e)}</li>" for e in b.entries) + "</ul>"
    if isinstance(b, n.FixList):
        return '<ul class="fix">' + "".join(
            f"<li><code>{esc(f.cause)}</code>: {esc(f.fix)}"
            + (f" <span class='muted'>(specified by <code>{esc(f.spec)}</code>)</span>" if f.spec else "") + "</li>"
            for f in b.fixes) + "</ul>"
    if isinstance(b, n.Comparison):
        return comparison(b)
    if isinstance(b, n.Alignment):
        return alignment(b)
    if isinstance(b, n.Quote):
        return f'<div class="text">{esc(b.text)}{esc(b.more)}</div>'
    if isinstance(b, n.Sample):
        note = f" <span class='muted'>{esc(b.note)}</span>" if b.note else ""
        return (f"<h{level + 1}>{esc(b.title)}: {esc(b.ref)}{note}</h{level + 1}>"
                f'<div class="text">{esc(b.text)}{esc(b.more)}</div>{comparison(b.comparison)}')
    if isinstance(b, n.Listing):
        return "<ul>" + "".join(
            f"<li><strong>{esc(e.who)}</strong> {esc(e.ref)} ({', '.join(inline(x) for x in e.notes)}): "
            f"{inline(e.text)} — {esc(e.evidence)}" + (f" What it did: {esc(e.shape)}." if e.shape else "") + "</li>"
            for e in b.entries) + "</ul>"
    if isinstance(b, n.Part):
        return f"<h{level + 1}>{esc(b.title)}</h{level + 1}>" + "".join(block(x, level + 1) for x in b.blocks)
    if isinstance(b, n.Article):
        return article(b, level)
    if isinstance(b, n.Details):
        return f"<details><summary>{esc(b.summary)}</summary>" + "".join(block(x, level) for x in b.blocks) \
            + "</details>"
    if isinstance(b, n.Filters):
        return filters(b)
    raise TypeError(f"no HTML form for {type(b).__name__}")


def article(a: n.Article, level: int) -> str:
    """A write-up or a finding as an ``<article>``; a mismatch of the list as a ``div.case`` whose
    ``data-*`` attributes the filters select on (templates/report.js)."""
    body = f"<h{level}>{inline(a.title)}</h{level}>" + "".join(block(x, level) for x in a.blocks)
    if a.kind == "case":
        data = " ".join(f'data-{esc(k)}="{esc(v)}"' for k, v in a.data)
        return f'<div class="case" {data}>{body}</div>'
    return f'<article class="{esc(a.kind)}">{body}</article>'


def table(t: n.Table) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in t.columns)
    rows = []
    for row in t.rows:
        cells = []
        for k, (name, cell) in enumerate(zip(t.columns, row)):
            if k == 0 and t.row_headers:
                cells.append(f"<th>{inline(cell)}</th>")
            else:
                cells.append(f"<td class='num'>{inline(cell)}</td>" if name in t.numeric else f"<td>{inline(cell)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _tok(t: n.Token) -> str:
    return (f'<span class="tok" title="{esc(t.id)} {esc(repr(t.stored))}"><span class="tid">{esc(t.id)}</span>'
            f'<span class="tpc">{esc(t.piece)}</span></span>')


def comparison(c: n.Comparison) -> str:
    """The two id lists in aligned columns, the first difference in the same column on both sides."""
    top, bottom = [], []
    for s in c.spans:
        if s.kind == "gap":
            top.append(f'<td class="gap" rowspan="2">… {s.skipped} same …</td>')
            continue
        css = "diff" if s.kind == "diff" else "same"
        top.append(f'<td class="{css}">{"".join(_tok(t) for t in s.oracle) or "<i>none</i>"}</td>')
        bottom.append(f'<td class="{css}">{"".join(_tok(t) for t in s.backend) or "<i>none</i>"}</td>')
    return (f'<table class="tokens"><caption>{c.caption}</caption>'
            f'<tr><th>{esc(c.oracle)} (oracle)</th>{"".join(top)}</tr>'
            f'<tr><th>{esc(c.backend)}</th>{"".join(bottom)}</tr></table>')


def _pieces(tokens: tuple[n.Token, ...], start: int) -> str:
    """Pieces as readable text, shaded by turns; the id and the stored spelling are the tooltip."""
    return "".join(f'<span class="piece t{(start + k) % 2}" title="{esc(t.id)} {esc(repr(t.stored))}">'
                   f"{esc(t.piece)}</span>" for k, t in enumerate(tokens))


def _ids(tokens: tuple[n.Token, ...]) -> str:
    return f'<span class="ids">{esc([t.id for t in tokens])}</span>'


def alignment(a: n.Alignment) -> str:
    """Equal runs once, differing runs side by side (a long equal run folded)."""
    rows = [f"<tr><th>oracle: {esc(a.oracle)}</th><th>backend: {esc(a.backend)}</th></tr>"]
    for r in a.rows:
        if r.kind == "fold":
            cell = (f"{_pieces(r.oracle, r.oracle_start)} <span class='muted'>… {r.skipped} equal …</span> "
                    f"{_pieces(r.tail, r.oracle_start + len(r.oracle) + r.skipped)}")
            rows.append(f'<tr class="equal"><td colspan="2">{cell}</td></tr>')
            continue
        rows.append(f'<tr class="{r.kind}"><td>{_ids(r.oracle)}<br>{_pieces(r.oracle, r.oracle_start)}</td>'
                    f'<td>{_ids(r.backend)}<br>{_pieces(r.backend, r.backend_start)}</td></tr>')
    return '<table class="align">' + "".join(rows) + "</table>"


def filters(f: n.Filters) -> str:
    def select(name: str, label: str, values: tuple[str, ...]) -> str:
        options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
        return f'<label>{esc(label)} <select name="{esc(name)}"><option value="">all</option>{options}</select></label>'
    return ('<form id="filters" onsubmit="return false">\n' + "".join(select(*s) for s in f.selects)
            + '\n<span id="shown"></span>\n</form>\n')


def render(results: Results) -> str:
    """report.html."""
    return page(build(results, PAGE))
