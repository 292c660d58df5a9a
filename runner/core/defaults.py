"""A command's defaults, spelled once: read by the CLI's `--help` (which loads none of the
pipeline) and by the run's options alike."""

from __future__ import annotations

DEFAULT_CONCURRENCY = 8
"""Experiments created at once."""
DEFAULT_MAX_UNREACHABLE = 180.0
"""Seconds the backend may be unreachable (or leave a call unanswered) before a command gives up."""
DEFAULT_TIMEOUT = 3600.0
"""Seconds a Beaker run may take when --timeout is not given (local runs have no default)."""
DEFAULT_READ_TIMEOUT = 600.0
"""Seconds every other command that talks to Beaker may take when --timeout is not given
(`status`, `report`, `logs`, `cancel`, `lock`, `propose`; `wait` and `logs --follow` have none:
their calls are bounded by the unreachable limit)."""
DEFAULT_GRACE = 15.0
"""Seconds a write in flight at the deadline (a create) may still take to land: its reply is
worth waiting for, so what it made is recorded instead of left unknown."""
