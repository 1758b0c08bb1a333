"""The palace tests' sidecar: a real app on a loopback server over the demo memory dir, configured
by keyword overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.memory import ClientFactory


@pytest.fixture
def start(sidecar_client: ClientFactory, memory_dir: Path) -> ClientFactory:
    return sidecar_client
