"""The memory browser's page frame: one stylesheet inline, the navigation, and the headers that
keep the pages to this origin.

The pages are the agent's memory, so a foreign web page must neither read them nor frame them:
the Host and Origin guards of the agent API apply as to every route, a request a browser marks
as coming from another site (``Sec-Fetch-Site``) is refused, and every page is sent with a
Content-Security-Policy of ``default-src 'self'`` (the inline stylesheet allowed by its hash,
nothing else inline: no script runs in a page) and ``X-Frame-Options: DENY``."""

from __future__ import annotations

import base64
import hashlib
import html

from aiohttp import web

from sidecar.errors import Forbidden

__all__ = ["CSP", "NAV", "check_same_origin", "esc", "page"]

_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#fafafa}
header{background:#24303c;padding:.5em 1em}header a{color:#dfe7ef;margin-right:1.1em;text-decoration:none}
header a.here{color:#fff;font-weight:600;border-bottom:2px solid #7fb8ff}
main{max-width:62em;margin:1em auto;padding:0 1em}
h1{font-size:1.35em}h2{font-size:1.15em}
form{margin:.6em 0 1em}input,select{font:inherit;padding:.15em .35em}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
pre{background:#f0f2f4;padding:.6em;overflow-x:auto;white-space:pre-wrap}
code{background:#f0f2f4;padding:0 .2em}
mark{background:#ffe27a;padding:0 .1em}
.flagged{border-left:4px solid #c0392b;background:#fdf0ee;padding:.2em .8em;margin:.6em 0}
.flag-note{color:#9b2c20;font-weight:600;font-size:.9em}
.hit{border-bottom:1px solid #e3e3e3;padding:.5em 0}.meta{color:#5b6670;font-size:.88em}
.tree ul{list-style:none;padding-left:1.2em;margin:.1em 0}.tree summary{cursor:pointer;font-weight:600}
.timeline{list-style:none;padding-left:0;border-left:3px solid #9db4c8}
.timeline li{margin:0 0 .7em;padding-left:.8em}
.warn{color:#a05a00}.error{color:#b02a1e}.live{color:#227a3a}.muted{color:#777}
.block{white-space:pre-wrap;background:#fff;border:1px solid #ccc}
"""
_STYLE_HASH = base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode()
#: Every page's policy: only this origin, the inline stylesheet by hash, no framing, forms back here.
CSP = (
    f"default-src 'self'; style-src 'sha256-{_STYLE_HASH}'; img-src 'self' data:; "
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
#: (path, label) of each view, in the navigation's order.
NAV = (
    ("/ui", "Files"),
    ("/ui/search", "Search"),
    ("/ui/memories", "Memories"),
    ("/ui/journal", "Journal"),
    ("/ui/graph", "Graph"),
    ("/ui/health", "Health"),
    ("/ui/block", "Block"),
)
#: What a browser may say of where a request came from: typed or bookmarked (none), or this page.
_SAME = frozenset({"same-origin", "none"})


def esc(value: object) -> str:
    """Any value as HTML text (quotes too, so it is safe in an attribute)."""
    return html.escape(str(value), quote=True)


def check_same_origin(request: web.Request) -> None:
    """403 for a request a browser says another site started (a link, a form or an embed there):
    the memory browser is opened by typing its address or from its own pages."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in _SAME:
        raise Forbidden(
            f"the memory browser is not opened from another site (Sec-Fetch-Site: {site[:40]})", code="origin_refused"
        )


def _link(path: str, label: str, here: str) -> str:
    mark = ' class="here" aria-current="page"' if path == here else ""
    return f'<a href="{path}"{mark}>{esc(label)}</a>'


def page(title: str, body: str, *, here: str) -> web.Response:
    """A whole page: the frame around ``body`` (already HTML), with the headers above."""
    nav = "".join(_link(path, label, here) for path, label in NAV)
    text = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)} · memory</title><style>{_CSS}</style></head>"
        f"<body><header><nav>{nav}</nav></header><main><h1>{esc(title)}</h1>\n{body}\n</main></body></html>"
    )
    return web.Response(text=text, content_type="text/html", charset="utf-8", headers=_HEADERS)
