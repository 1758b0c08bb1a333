"""The five-metric memory health score, stored as a daily snapshot.

Over one workspace (or one crew in it, ``crew_id``), with E = its embeddable entries (those that
pass the embedding filter or carry the override) and I = those of E embedded by the model most of
them use (n = |I|, unit vectors v_i):

- **freshness** = 100 × max(0, 1 − median age of I in days / 180), age from the entry's ts;
  0 when n = 0. (180 days is the horizon of the importance decay.)
- **coverage** = 100 × n / |E|; 100 when E is empty (nothing was missed).
- **coherence** = 100 × mean over i of max over j ≠ i of max(0, v_i · v_j): how close each entry's
  nearest neighbour is, i.e. how tightly entries group around shared themes; 0 when n < 2.
- **efficiency** = 100 × mean over i of the mean of max(0, v_i · v_j) over its K = min(5, n − 1)
  nearest j ≠ i: the average cosine of a top-K recall probed with each entry; 0 when n < 2.
- **reachability** = 100 × (entries of I touching at least one memory_relations edge) / n; 0 when n = 0.

score = 0.25 freshness + 0.25 coverage + 0.20 coherence + 0.15 efficiency + 0.15 reachability;
band red < 50 ≤ yellow < 75 ≤ green. Above 2,000 embeddings, coherence and efficiency are probed
with 2,000 evenly spaced entries (their neighbours still come from all n).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from sidecar.clock import age_days, utcnow
from sidecar.episodic.importance import HORIZON_DAYS
from sidecar.episodic.store import HealthInputs, HealthSnapshot, JournalStore

if TYPE_CHECKING:
    # numpy is imported where vectors are ranked or made: a sidecar with no embedder never loads it.
    import numpy as np
    import numpy.typing as npt

__all__ = ["EFFICIENCY_K", "MAX_PROBES", "WEIGHTS", "compute_health", "health_history", "latest_health", "metrics"]

WEIGHTS = {"freshness": 0.25, "coverage": 0.25, "coherence": 0.20, "efficiency": 0.15, "reachability": 0.15}
EFFICIENCY_K = 5
MAX_PROBES = 2000
_BLOCK = 512


async def compute_health(
    store: JournalStore, workspace_id: str, crew_id: str | None = None, now: datetime | None = None
) -> HealthSnapshot:
    """Compute the score now and store it as the snapshot of ``now``'s UTC date (replacing one)."""
    now = now or utcnow()
    values = metrics(await store.health_inputs(workspace_id, crew_id), now)
    score = sum(WEIGHTS[name] * value for name, value in values.items())
    snapshot = HealthSnapshot(
        workspace_id=workspace_id,
        crew_id=crew_id,
        snapshot_date=now.date().isoformat(),
        score=score,
        **values,
    )
    await store.save_health(snapshot)
    return snapshot


async def latest_health(store: JournalStore, workspace_id: str, crew_id: str | None = None) -> HealthSnapshot | None:
    """The newest stored snapshot, without recomputing."""
    return await store.latest_health(workspace_id, crew_id)


async def health_history(
    store: JournalStore, workspace_id: str, crew_id: str | None = None, days: int = 90
) -> list[HealthSnapshot]:
    """The stored snapshots of the last ``days`` snapshots (one a day), oldest first."""
    return await store.health_history(workspace_id, crew_id, days)


def metrics(inputs: HealthInputs, now: datetime) -> dict[str, float]:
    """The five metrics (see the module docstring), each in [0, 100]."""
    n = inputs.indexed
    coherence, efficiency = _neighbour_metrics(inputs.vectors)
    return {
        "freshness": _freshness(inputs.entry_ts, now),
        "coverage": 100.0 if inputs.embeddable == 0 else 100.0 * min(n, inputs.embeddable) / inputs.embeddable,
        "coherence": coherence,
        "efficiency": efficiency,
        "reachability": 0.0 if n == 0 else 100.0 * inputs.linked / n,
    }


def _freshness(stamps: list[datetime], now: datetime) -> float:
    if not stamps:
        return 0.0
    median = _median([age_days(ts, now) for ts in stamps])
    return 100.0 * max(0.0, 1.0 - median / HORIZON_DAYS)


def _median(values: list[float]) -> float:
    """``statistics.median`` of a non-empty list, whose module (with the decimal and fractions it
    imports, some 1.7 MB) an idle sidecar would otherwise hold for this one figure."""
    ordered = sorted(values)
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def _neighbour_metrics(vectors: npt.NDArray[np.float32]) -> tuple[float, float]:
    """(coherence, efficiency) from each probe's nearest neighbours by cosine."""
    import numpy as np

    n = len(vectors)
    if n < 2:
        return 0.0, 0.0
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)
    probes = np.unique(np.linspace(0, n - 1, min(n, MAX_PROBES)).round().astype(int))
    k = min(EFFICIENCY_K, n - 1)
    nearest: list[float] = []
    top_means: list[float] = []
    for start in range(0, len(probes), _BLOCK):
        block = probes[start : start + _BLOCK]
        sims = np.clip(unit[block] @ unit.T, 0.0, None).astype(np.float64)
        sims[np.arange(len(block)), block] = -np.inf  # never one's own neighbour
        best = -np.partition(-sims, k - 1, axis=1)[:, :k]  # the k largest, unordered
        top = -np.sort(-best, axis=1)
        nearest += top[:, 0].tolist()
        top_means += top.mean(axis=1).tolist()
    return 100.0 * float(np.mean(nearest)), 100.0 * float(np.mean(top_means))
