"""Memory markdown as safe HTML: headings, lists, code fences and paragraphs.

Every character of the source is escaped; the only tags in the output are the renderer's own
(no raw HTML, links or images pass through), so a memory file cannot put script, style or a
form into the page that shows it. Every line of the source that shows carries ``id="L<n>"``, its
1-based line number (a heading, a list item, a paragraph's line, a fence and each line of its
code), so a search hit can point at the line it starts on."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator

__all__ = ["inline", "render"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:\s+(.*?))?\s*$")
_ITEM = re.compile(r"^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$")
_CODE = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*([^*]+)\*\*")


def inline(text: str) -> str:
    """One line's text, escaped, with `code` spans and **strong** runs shown as such."""
    escaped = html.escape(text, quote=True)
    return _STRONG.sub(r"<strong>\1</strong>", _CODE.sub(r"<code>\1</code>", escaped))


def render(text: str, first_line: int = 1) -> str:
    """``text`` (lines ``first_line``.. of a file) as HTML blocks."""
    return "\n".join(_blocks(text.splitlines(), first_line))


def _blocks(lines: list[str], first: int) -> Iterator[str]:
    i = 0
    while i < len(lines):
        line, anchor = lines[i], f' id="L{first + i}"'
        fence = _FENCE.match(line)
        heading = _HEADING.match(line)
        if fence:
            end = _fence_end(lines, i, fence.group(1))
            body = "\n".join(_line(first + j, html.escape(lines[j], quote=True)) for j in range(i + 1, end))
            yield f"<pre{anchor}><code>{body}</code></pre>"
            i = end + 1
        elif heading:
            level = len(heading.group(1))
            yield f"<h{level}{anchor}>{inline(heading.group(2) or '')}</h{level}>"
            i += 1
        elif _ITEM.match(line):
            end = _run_end(lines, i, lambda s: bool(_ITEM.match(s)))
            yield _list(lines[i:end], first + i)
            i = end
        elif not line.strip():
            i += 1
        else:
            end = _run_end(lines, i, _is_text)
            yield "<p>" + "<br>\n".join(_line(first + j, inline(lines[j])) for j in range(i, end)) + "</p>"
            i = end


def _fence_end(lines: list[str], start: int, opener: str) -> int:
    """The index of the fence closing the one at ``start`` (the last line when it never closes)."""
    for j in range(start + 1, len(lines)):
        close = _FENCE.match(lines[j])
        same = close is not None and close.group(1)[0] == opener[0] and len(close.group(1)) >= len(opener)
        if same and not lines[j].strip().lstrip(opener[0]):
            return j
    return len(lines)


def _is_text(line: str) -> bool:
    return bool(line.strip()) and not (_FENCE.match(line) or _HEADING.match(line) or _ITEM.match(line))


def _run_end(lines: list[str], start: int, keep: Callable[[str], bool]) -> int:
    end = start + 1
    while end < len(lines) and keep(lines[end]):
        end += 1
    return end


def _line(number: int, shown: str) -> str:
    return f'<span id="L{number}">{shown}</span>'


def _list(items: list[str], line: int) -> str:
    first = _ITEM.match(items[0])
    tag = "ol" if first is not None and first.group(2) is not None else "ul"
    shown = []
    for offset, item in enumerate(items):
        found = _ITEM.match(item)
        shown.append(f'<li id="L{line + offset}">{inline(found.group(3) if found else item)}</li>')
    return f"<{tag}>" + "".join(shown) + f"</{tag}>"
