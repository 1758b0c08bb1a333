"""The health view's charts as inline SVG: the five metrics of a snapshot as bars, and the score
over time as a line over the red, yellow and green bands (drawn server-side: no script)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from sidecar.episodic.store import HealthSnapshot

__all__ = ["METRICS", "metric_bars", "score_line"]

METRICS = ("freshness", "coverage", "coherence", "efficiency", "reachability")
_W, _H, _PAD = 560, 220, 36
# (low, high, fill) of the score's bands: red below 50, yellow below 75, green above.
_BANDS = ((0, 50, "#f6d5d1"), (50, 75, "#fbefc6"), (75, 100, "#d5efd9"))


def _y(value: float) -> float:
    """A 0-100 value's height in the plot (100 at the top)."""
    return round(_PAD / 2 + (100 - max(0.0, min(100.0, value))) * (_H - _PAD) / 100, 1)


def _frame(label: str, inner: str) -> str:
    axis = f"M{_PAD} {_y(100)} V{_y(0)} H{_W - 8}"
    ticks = "".join(
        f'<text x="{_PAD - 6}" y="{_y(v) + 4}" text-anchor="end" font-size="10" fill="#555">{v}</text>'
        for v in (0, 50, 75, 100)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" '
        f'role="img" aria-label="{label}"><title>{label}</title>{inner}'
        f'<path class="axis" d="{axis}" fill="none" stroke="#444" stroke-width="1"/>{ticks}</svg>'
    )


def metric_bars(snapshot: HealthSnapshot) -> str:
    """The snapshot's five metrics (0-100) as bars, each with its value."""
    step = (_W - _PAD - 16) / len(METRICS)
    bars = []
    for i, name in enumerate(METRICS):
        value = float(getattr(snapshot, name))
        x = round(_PAD + 8 + i * step, 1)
        top = _y(value)
        bars.append(
            f'<rect class="metric" data-metric="{name}" x="{x}" y="{top}" width="{round(step * 0.6, 1)}" '
            f'height="{round(_y(0) - top, 1)}" fill="#4f86c6"><title>{name} {value:.1f}</title></rect>'
            f'<text x="{round(x + step * 0.3, 1)}" y="{top - 4}" text-anchor="middle" font-size="11">{value:.0f}</text>'
            f'<text x="{round(x + step * 0.3, 1)}" y="{_H - 6}" text-anchor="middle" font-size="11">{name}</text>'
        )
    return _frame("the five health metrics of the latest snapshot", "".join(bars))


def score_line(points: Sequence[tuple[str, float]]) -> str:
    """The score over time: one point per snapshot date, joined by a line, over the bands."""
    bands = "".join(
        f'<rect x="{_PAD}" y="{_y(high)}" width="{_W - _PAD - 8}" height="{round(_y(low) - _y(high), 1)}" '
        f'fill="{fill}"/>'
        for low, high, fill in _BANDS
    )
    if not points:
        return _frame("no health score yet", bands)
    span = _W - _PAD - 40
    xs = [
        round(_PAD + 20 + (i * span / (len(points) - 1) if len(points) > 1 else span / 2), 1)
        for i in range(len(points))
    ]
    ys = [_y(score) for _, score in points]
    line = "M" + " L".join(f"{x} {y}" for x, y in zip(xs, ys, strict=True))
    if len(points) == 1:  # one snapshot: a level mark across the plot, so the score reads as a line
        line = f"M{_PAD} {ys[0]} H{_W - 8}"
    dots = "".join(
        f'<circle cx="{x}" cy="{y}" r="4" fill="#24303c"><title>{html.escape(date)} score {score:.1f}</title></circle>'
        f'<text x="{x}" y="{_H - 6}" text-anchor="middle" font-size="11">{html.escape(date)}</text>'
        for x, y, (date, score) in zip(xs, ys, points, strict=True)
    )
    path = f'<path class="score" d="{line}" fill="none" stroke="#24303c" stroke-width="2"/>'
    return _frame("the health score over time", bands + path + dots)
