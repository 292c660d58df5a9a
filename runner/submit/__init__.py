"""Exactly-once submission: one experiment per point under retries, lost replies and races.

The protocol, per point (its name is derived from its key, so it is the same in every run):
1. Before anything is created, existing experiments are listed in bulk and adopted when they
   carry the point's key. This repairs a ledger commit that never landed.
2. Create under the deterministic name. Successes are recorded in the ledger in batches: one
   writer (the thread that runs `Submitter.run`) writes all that has accumulated once the oldest
   unwritten entry is `Options.record_every` seconds old, and always before the run returns or
   raises, at its deadline too. An experiment that exists but never reached the ledger (the
   runner was killed between two writes) is adopted by step 1 of the next run, so batching
   loses nothing.
3. A transient failure (5xx, 429, reset, timeout, a reply cut off, UNAVAILABLE) may have created
   the experiment on the server. The next attempt first looks the name up (in the workspace,
   whoever created it) and adopts what it finds.
4. A name conflict (409) means "look it up": adopt it when it records our key, otherwise reject
   the point loudly, naming the other experiment. A new name is never invented.
5. Client errors are never retried. Attempts are bounded in number and time, and the whole run
   by a deadline: a hung backend call is abandoned (daemon thread) and reported.
6. After its creates, the run looks for a second experiment with the same key (two accounts,
   names scoped per author): the older is kept and recorded, the newer cancelled by the run that
   created it (`duplicates`).

A run ends early, writing the ledger first, at its deadline, when the backend has been
unreachable for `Options.max_unreachable` seconds, or on SIGINT/SIGTERM (`request_stop`): no
new create starts, those in flight get a short grace, and each point left is reported as never
started or as in flight with an unknown outcome.

Modules: `outcome` (what a run reports), `options` (configuration and clock), `point` (steps
2-5), `duplicates` (step 6), `run` (the `Submitter`: steps 1 and the loop).
"""

from runner.core.clock import Clock
from runner.core.retry import RetryPolicy
from runner.submit.options import Options
from runner.submit.outcome import Duplicate, Listener, Outcome, OutcomeStatus, Stop, StopKind
from runner.submit.run import Submitter

__all__ = [
    "Clock",
    "Duplicate",
    "Listener",
    "Options",
    "Outcome",
    "OutcomeStatus",
    "RetryPolicy",
    "Stop",
    "StopKind",
    "Submitter",
]
