"""``python -m sidecar`` is the ``memory-sidecar`` command."""

from sidecar.cli import main

raise SystemExit(main())
