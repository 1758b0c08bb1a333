"""Each view of the memory browser as HTML, from the answers the API's functions give.

Every value is escaped where it enters the page (``esc``); memory text goes through the markdown
renderer, which escapes it too. Links carry their values as query parameters, quoted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from sidecar.episodic.store import HealthSnapshot
from sidecar.ui.chart import METRICS, metric_bars, score_line
from sidecar.ui.markdown import render
from sidecar.ui.page import esc

__all__ = [
    "block_view",
    "file_view",
    "graph_view",
    "health_view",
    "history_view",
    "journal_view",
    "memories_view",
    "search_view",
    "tree_view",
]


def href(view: str, /, **query: object) -> str:
    """A link to a view, its parameters quoted (empty ones left out), escaped for an attribute."""
    given = {k: str(v) for k, v in query.items() if v not in (None, "")}
    return esc(view + ("?" + urlencode(given) if given else ""))


def _form(action: str, fields: Iterable[str], button: str) -> str:
    return f'<form method="get" action="{action}">{"".join(fields)} <button type="submit">{button}</button></form>'


def _input(name: str, value: str | None, label: str, *, size: int = 14, kind: str = "text") -> str:
    return f'<label>{label} <input type="{kind}" name="{name}" value="{esc(value or "")}" size="{size}"></label> '


def _select(name: str, value: str | None, options: Sequence[str], label: str) -> str:
    shown = "".join(
        f'<option value="{esc(o)}"{" selected" if o == (value or "") else ""}>{esc(o or "(any)")}</option>'
        for o in options
    )
    return f'<label>{label} <select name="{name}">{shown}</select></label> '


# -- files ------------------------------------------------------------------------------------------
def tree_view(files: Sequence[Mapping[str, Any]]) -> str:
    """The tiers' files as a tree: tier, then folders, then files (each a link to its page)."""
    if not files:
        return '<p class="muted">No memory files.</p>'
    by_tier: dict[str, dict[str, Any]] = {}
    for f in files:
        node = by_tier.setdefault(str(f["wing"]), {})
        *folders, name = str(f["path"]).split("/")
        for folder in folders:
            node = node.setdefault(folder + "/", {})
        node[name] = f
    parts = [
        f"<details open><summary>{esc(tier)}</summary>{_branch(tier, node)}</details>"
        for tier, node in sorted(by_tier.items())
    ]
    return f'<div class="tree" id="tree">{"".join(parts)}</div>'


def _branch(tier: str, node: Mapping[str, Any]) -> str:
    items = []
    for name, child in sorted(node.items(), key=lambda kv: (not kv[0].endswith("/"), kv[0])):
        if name.endswith("/"):
            items.append(f"<li><details open><summary>{esc(name)}</summary>{_branch(tier, child)}</details></li>")
        else:
            link = href("/ui/file", tier=tier, path=child["path"])
            meta = f'<span class="meta">{child["bytes"]} B · {child["chunks"]} chunks · {esc(child["modified"])}</span>'
            items.append(f'<li><a class="file" href="{link}">{esc(name)}</a> {meta}</li>')
    return "<ul>" + "".join(items) + "</ul>"


def file_view(answer: Mapping[str, Any]) -> str:
    """The file rendered; each section the injection scanner flagged is marked, with its finding:
    the memory block withholds it, and read and search mark it as data."""
    lines = str(answer["content"]).splitlines()
    flagged = sorted(answer.get("flagged", []), key=lambda f: int(f["line_start"]))
    out, line = [], 1
    for f in flagged:
        start, end = int(f["line_start"]), min(int(f["line_end"]), len(lines))
        if start > line:
            out.append(render("\n".join(lines[line - 1 : start - 1]), line))
        note = (
            f'<p class="flag-note">Withheld from the memory block: {esc(f["category"])} '
            f"({esc(f['pattern'])}, level {esc(f['level'])}), lines {start}-{end}</p>"
        )
        inner = render("\n".join(lines[start - 1 : end]), start)
        out.append(f'<section class="flagged" data-lines="{start}-{end}">{note}{inner}</section>')
        line = end + 1
    if line <= len(lines):
        out.append(render("\n".join(lines[line - 1 :]), line))
    head = f'<p class="meta">{esc(answer["tier"])} · {esc(answer["path"])} · {answer["bytes"]} bytes'
    head += f" · {len(flagged)} flagged section(s)</p>" if flagged else "</p>"
    return head + '<article class="memory-file">' + "\n".join(out) + "</article>"


# -- search -----------------------------------------------------------------------------------------
def search_view(query: str, scope: str | None, answer: Mapping[str, Any] | None, scopes: Sequence[str]) -> str:
    form = _form(
        "/ui/search",
        [_input("query", query, "Query", size=40), _select("scope", scope, ["", *scopes], "Scope")],
        "Search",
    )
    if answer is None:
        return form
    hits = answer["results"]
    degraded = answer.get("degraded")
    note = f' <span class="warn">degraded: {esc(", ".join(degraded))}</span>' if degraded else ""
    head = f'<p class="meta">{len(hits)} hit(s) · scope {esc(answer["scope"])}{note}</p>'
    if not hits:
        return form + head + '<p class="muted">Nothing matched.</p>'
    return form + head + '<ol class="hits">' + "".join(_hit(h) for h in hits) + "</ol>"


def marked(snippet: str, highlights: Iterable[Sequence[int]]) -> str:
    """The snippet with its highlights (``[start, end)`` code point offsets) in ``<mark>``."""
    out, at = [], 0
    for start, end in sorted((int(a), int(b)) for a, b in highlights):
        if start < at or end <= start:
            continue
        out.append(esc(snippet[at:start]) + "<mark>" + esc(snippet[start:end]) + "</mark>")
        at = end
    return "".join(out) + esc(snippet[at:])


def _hit(hit: Mapping[str, Any]) -> str:
    link = href("/ui/file", tier=hit["source"], path=hit["path"]) + f"#L{int(hit['line_start'])}"
    where = f"{esc(hit['source'])}/{esc(hit['path'])}"
    meta = f"{esc(hit['heading'])} · lines {hit['line_start']}-{hit['line_end']} · score {float(hit['score']):.3f}"
    flag = hit.get("flagged")
    flag_note = (
        f'<p class="flag-note">Flagged by the injection scanner: {esc(flag["category"])} ({esc(flag["level"])}); treat as data</p>'
        if flag
        else ""
    )
    explain = hit.get("explain")
    why = f"<details><summary>explain</summary>{_explain(explain)}</details>" if explain else ""
    return (
        f'<li class="hit"><a class="hit-path" href="{link}">{where}</a> <span class="meta">{meta}</span>'
        f'<p class="snippet">{marked(str(hit["snippet"]), hit.get("highlights", []))}</p>{flag_note}{why}</li>'
    )


def _explain(explain: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{_value(v)}</td></tr>" for k, v in explain.items())
    return f'<table class="explain">{rows}</table>'


def _value(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{esc(k)}: {_value(v)}" for k, v in value.items()) or "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value) or "-"
    return esc(value)


# -- typed memories ---------------------------------------------------------------------------------
def memories_view(given: Mapping[str, str], found: Sequence[Mapping[str, Any]], types: Sequence[str]) -> str:
    form = _form(
        "/ui/memories",
        [
            _select("memory_type", given.get("memory_type"), ["", *types], "Type"),
            _input("namespace", given.get("namespace"), "Namespace"),
            _input("tag", given.get("tag"), "Tag"),
            _input("agent_id", given.get("agent_id"), "Agent"),
            _input("workspace_id", given.get("workspace_id"), "Workspace"),
        ],
        "Filter",
    )
    if not found:
        return form + '<p class="muted">No live memories match.</p>'
    rows = "".join(_memory_row(m, given) for m in found)
    head = "<tr><th>type</th><th>memory</th><th>tags</th><th>importance</th><th>feedback</th><th>topic key</th></tr>"
    return form + f'<p class="meta">{len(found)} memories</p><table id="memories">{head}{rows}</table>'


def _feedback(m: Mapping[str, Any]) -> str:
    fb = m.get("feedback") or {}
    return f"+{int(fb.get('positive', 0))} / −{int(fb.get('negative', 0))}"


def _memory_row(m: Mapping[str, Any], given: Mapping[str, str]) -> str:
    key = m.get("topic_key")
    who = {k: given.get(k) for k in ("namespace", "agent_id", "workspace_id")}
    topic = f'<a class="topic" href="{href("/ui/memory", topic_key=key, **who)}">{esc(key)}</a>' if key else "-"
    return (
        f"<tr><td>{esc(m.get('memory_type') or '-')}</td><td>{esc(m['summary'])}</td>"
        f"<td>{esc(', '.join(m.get('tags', [])))}</td><td>{float(m['importance']):.2f}</td>"
        f"<td>{_feedback(m)}</td><td>{topic}</td></tr>"
    )


def history_view(topic_key: str, entries: Sequence[Mapping[str, Any]]) -> str:
    """Every memory that held the topic key, newest first: the live one, then what it replaced."""
    if not entries:
        return f'<p class="muted">No memory ever held the topic key {esc(topic_key)}.</p>'
    items = []
    for m in entries:
        status = str(m["status"])
        extra = f" · superseded by {esc(m['superseded_by'])}" if m.get("superseded_by") else ""
        items.append(
            f'<li class="version {esc(status)}"><span class="meta">{esc(m["ts"])} · <span class="{"live" if status == "live" else "muted"}">'
            f"{esc(status)}</span> · {esc(m.get('memory_type') or '-')} · importance {float(m['importance']):.2f} · "
            f"feedback {_feedback(m)} · recalled {int(m.get('access_count') or 0)}×{extra}</span>"
            f"<p>{esc(m['summary'])}</p></li>"
        )
    return f'<p class="meta">topic key {esc(topic_key)} · {len(entries)} version(s)</p><ol class="timeline" id="history">{"".join(items)}</ol>'


# -- journal ----------------------------------------------------------------------------------------
def journal_view(workspace_id: str, q: str, entries: Sequence[Mapping[str, Any]]) -> str:
    form = _form(
        "/ui/journal", [_input("q", q, "Search", size=30), _input("workspace_id", workspace_id, "Workspace")], "Show"
    )
    if not entries:
        return form + '<p class="muted">No journal entries.</p>'
    items, day = [], None
    for e in entries:
        ts = str(e["ts"])
        if ts[:10] != day:
            day = ts[:10]
            items.append(f'<li class="day"><h2>{esc(day)}</h2></li>')
        sev = str(e.get("severity") or "info")
        items.append(
            f'<li class="entry"><span class="meta">{esc(ts[11:19])} · {esc(e["entry_type"])} · '
            f'<span class="{esc(sev)}">{esc(sev)}</span> · {esc(e["agent_id"])}</span><p>{esc(e["summary"])}</p></li>'
        )
    return form + f'<ol class="timeline" id="journal">{"".join(items)}</ol>'


# -- the graph --------------------------------------------------------------------------------------
def graph_view(
    entity: str, stats: Mapping[str, Any] | None, line: Mapping[str, Any] | None, near: Mapping[str, Any] | None
) -> str:
    form = _form("/ui/graph", [_input("entity", entity, "Entity", size=30)], "Show")
    if stats is not None:
        counts = " · ".join(f"{esc(k)} {esc(v)}" for k, v in stats.items() if isinstance(v, int))
        form += f'<p class="meta">{counts}</p>'
    if line is None or near is None:
        return form
    name = line["entity"]["name"]
    facts = "".join(_fact(f) for f in line["facts"])
    others = [n for n in near["nodes"] if int(n["hops"]) > 0]
    links = "".join(
        f'<li><a class="neighbour" href="{href("/ui/graph", entity=n["name"])}">{esc(n["name"])}</a></li>'
        for n in others
    )
    return (
        form
        + f'<h2>Timeline of {esc(name)}</h2><ol class="timeline" id="entity-timeline">{facts or "<li>no facts</li>"}</ol>'
        + f'<h2>Neighbours</h2><ul id="neighbours">{links or "<li class=muted>none</li>"}</ul>'
    )


def _fact(f: Mapping[str, Any]) -> str:
    """One fact of a timeline: when it held (ended ones greyed), the triple, where it was read."""
    until = _day(f["valid_to"]) if f["valid_to"] else "now"
    triple = f"{esc(f['subject'])} <b>{esc(f['predicate'])}</b> {esc(f['object'])}"
    state = "live" if f["current"] else "muted"
    return (
        f'<li class="{state}"><span class="meta">{_day(f["valid_from"])} → {until}</span> '
        f'<p>{triple} <span class="meta">({esc(f["source"])})</span></p></li>'
    )


def _day(stamp: str) -> str:
    """A date as its day, the whole stamp on hover."""
    return f'<time datetime="{esc(stamp)}" title="{esc(stamp)}">{esc(stamp[:10])}</time>'


# -- health -----------------------------------------------------------------------------------------
def health_view(workspace_id: str, history: Sequence[HealthSnapshot]) -> str:
    form = _form("/ui/health", [_input("workspace_id", workspace_id, "Workspace")], "Show")
    if not history:
        return (
            form
            + '<p class="muted">No health snapshot yet (the daily job stores one; POST /memory/health computes it now).</p>'
        )
    latest = history[-1]
    rows = "".join(f"<tr><th>{name}</th><td>{float(getattr(latest, name)):.1f}</td></tr>" for name in METRICS)
    points = [(s.snapshot_date, float(s.score)) for s in history]
    return (
        form
        + f'<p>Score <b id="score">{latest.score:.1f}</b> ({esc(latest.band)}) on {esc(latest.snapshot_date)}</p>'
        + f'<div class="charts" id="health-charts">{score_line(points)}{metric_bars(latest)}</div>'
        + f"<table>{rows}</table>"
    )


# -- the block --------------------------------------------------------------------------------------
def block_view(
    query: str, budget: str, role: str | None, roles: Sequence[str], answer: Mapping[str, Any] | None
) -> str:
    form = _form(
        "/ui/block",
        [
            _input("query", query, "Query", size=30),
            _input("budget", budget, "Budget (characters)", size=7, kind="number"),
            _select("role", role, ["", *roles], "Role"),
        ],
        "Build",
    )
    if answer is None:
        return form
    blocked = "".join(
        f"<li>{esc(b['label'])} lines {b['line_start']}-{b['line_end']}: {esc(b['category'])} ({esc(b['level'])})</li>"
        for b in answer.get("blocked", [])
    )
    layers = "".join(
        f"<tr><td>{esc(p.get('layer'))}</td><td>{esc(p.get('part'))}</td><td>{esc(p.get('label'))}</td><td>{esc(p.get('chunks', ''))}</td></tr>"
        for p in answer.get("layers", [])
    )
    return (
        form
        + f'<p class="meta">{answer["used"]} of {answer["budget"]} characters · {len(answer.get("omitted", []))} omitted</p>'
        + f'<pre class="block" id="block-text">{esc(answer["text"])}</pre>'
        + (f'<h2>Withheld sections</h2><ul id="withheld">{blocked}</ul>' if blocked else "")
        + (f"<h2>Layers</h2><table>{layers}</table>" if layers else "")
    )
