"""The observation of a sweep as values: each point with what the backend and the ledger say of
it (`PointResult`), and the sweep as a whole (`Observation`): its group, notes, the stop its
guardrails call and its search. Pure data; `runner.observe.join` builds them."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from runner.backends import ExperimentState, Group
from runner.core.aims import Aim, Constraint
from runner.core.model import Condition
from runner.core.sample import Sample
from runner.core.search import Halving, Search
from runner.core.values import StrEnum, Value
from runner.observe.live import Reported, Skipped

PROGRESS = re.compile(r"\[\s*\d+(?:\.\d+)?\s*%[^\]]*\]")
"""Progress as OLMo-core's BeakerCallback writes it: `[3%, 30/1,000]`."""
LINK = re.compile(r"https?://[^\s\])>\"']+")
ROUND = "round"
"""An adaptive search's points carry their round (from the lock) as this extra parameter."""


class Absent(StrEnum):
    """A point without an experiment to show: not submitted yet, or recorded but gone."""

    NOT_SUBMITTED = "not submitted"
    MISSING = "missing"
    """Recorded in the ledger but not found on the backend."""


PointState = ExperimentState | Absent


def point_state(word: str) -> PointState:
    """A point's state from its word (`succeeded`, `not submitted`): ValueError for another."""
    return Absent(word) if word in set(Absent) else ExperimentState(word)


@dataclass(frozen=True)
class PointResult:
    status: str
    """The plan's: + to submit, = submitted, ~ drifted, - orphan."""
    experiment: str
    key: str
    params: tuple[tuple[str, Value], ...]
    state: PointState
    exit_code: int | None = None
    seconds: float | None = None
    metrics: Mapping[str, object] = field(default_factory=dict)
    url: str = ""
    restarts: int = 0
    """Restarts `submit --restart-failed` made (from the ledger)."""
    canceled_at: str | None = None
    """Set when `cancel` canceled it."""
    code: str = ""
    """`code:` sweeps: the commit the point runs (the ledger's)."""
    description: str = ""
    """What the job says about itself (`Experiment.description`), as it wrote it."""
    head: str = ""
    """Local `code:` runs: the commit checked out now, when it is not the one the point ran."""
    commit: str = ""
    """The commit the ledger records for the point's submission (any sweep)."""
    reported: tuple[Reported, ...] = ()
    """The reporting lines (`runner.observe.live`) read from its log's tail, in order: only
    where the reader read them (`live: true`, `--live`; `report`'s curves)."""

    @property
    def live(self) -> Reported | None:
        """Its latest report while it runs (None when it is not running, or reported nothing)."""
        if self.state != ExperimentState.RUNNING or not self.reported:
            return None
        return self.reported[-1]

    def curve(self, metric: str) -> tuple[tuple[int, float], ...]:
        """(step, value) of each report of `metric`, in the order printed."""
        return tuple((r.step, r.values[metric]) for r in self.reported if metric in r.values)

    skipped: Skipped | None = None
    """Reporting lines its log printed that report nothing (malformed), where it was read."""
    parent: str = ""
    """A successive halving's promoted point: the experiment of the point it came from (the
    same configuration one rung lower); empty at rung 0 and elsewhere."""

    @property
    def progress(self) -> str | None:
        """The progress in the description (`[3%, 30/1,000]`), if it shows one."""
        found = PROGRESS.search(self.description)
        return found.group(0) if found else None

    @property
    def link(self) -> str | None:
        """The first URL in the description (the run's W&B or Comet page, as jobs write)."""
        found = LINK.search(self.description)
        return found.group(0) if found else None

    @property
    def state_text(self) -> str:
        """The state, with what was done to the experiment on request."""
        extra = [f"restarted {self.restarts}x"] if self.restarts else []
        extra += ["canceled on request"] if self.canceled_at else []
        extra += [f"code {self.code[:12]}"] if self.code else []
        extra += [f"not HEAD {self.head[:12]}"] if self.head else []
        return self.state + (f" ({', '.join(extra)})" if extra else "")

    def number(self, metric: str) -> float | None:
        """The metric as a finite number, or None (absent, text, a flag, NaN)."""
        value = self.metrics.get(metric)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value) if math.isfinite(value) else None

    def finished(self, metric: str) -> float | None:
        """The metric when the point succeeded with it as a number; None otherwise."""
        return self.number(metric) if self.state == ExperimentState.SUCCEEDED else None


@dataclass(frozen=True)
class SweepStop:
    """Why a sweep creates no new points (`runner.observe.stops`)."""

    sweep: str
    reason: str
    """'stopped: 5 failed (max_failures 5)'."""
    limit: str = ""
    """The limit it reached, as the manifest says it: `5` (max_failures), `loss below 0.1`
    (stop_when)."""
    point: str = ""
    """The experiment that reached the target (stop_when)."""


@dataclass(frozen=True)
class Observation:
    """One sweep as seen at one moment: every point of its plan (manifest order, then orphans)
    with what the backend and the ledger say, built once per sweep per phase and read by every
    reader (`status`, `report`, `propose`, the notices, the guardrails)."""

    name: str
    path: str
    draft: bool
    axes: tuple[str, ...]
    """The sweep's parameter names, in axis order (what a plot can be drawn against)."""
    points: tuple[PointResult, ...]
    group: Group | None = None
    note: str = ""
    warnings: tuple[str, ...] = ()
    """Lines for stderr: points with more than one live experiment carrying their key."""
    stop: SweepStop | None = None
    """Why the sweep creates no new points (its guardrails), or None."""
    search: Search = field(default_factory=Search)
    """The sweep's search (`Sweep.search`, which the join always passes): what it weighs, its
    strategy and its lock."""
    conditions: tuple[Condition, ...] = ()
    """The conditional parameters' `when:` (grid and sampled): where each exists."""

    @property
    def metric_names(self) -> list[str]:
        return sorted({m for p in self.points for m in p.metrics})

    @property
    def numeric_metrics(self) -> list[str]:
        """The metrics some point has as a number, by name."""
        return [m for m in self.metric_names if any(p.number(m) is not None for p in self.points)]

    @property
    def objective(self) -> Aim | None:
        """What the sweep says is better (its first objective); None: it declares no direction
        (a grid without `stop_when`)."""
        return self.search.aims.first

    @property
    def constraints(self) -> tuple[Constraint, ...]:
        return self.search.aims.constraints

    @property
    def sample(self) -> Sample | None:
        return self.search.sample

    @property
    def halving(self) -> Halving | None:
        """A successive halving (its points carry their rung as a parameter)."""
        return self.search.halving
