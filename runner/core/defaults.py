"""A submit's defaults, spelled once: read by the CLI's `--help` (which loads none of the submit
path) and by the run's options alike."""

from __future__ import annotations

DEFAULT_CONCURRENCY = 8
"""Experiments created at once."""
DEFAULT_MAX_UNREACHABLE = 180.0
"""Seconds the backend may be unreachable before a run stops early."""
DEFAULT_TIMEOUT = 3600.0
"""Seconds a Beaker run may take when --timeout is not given (local runs have no default)."""
