"""One observation of a sweep, which every reader shares.

`status`, `report`, `propose`, `wait`, the notices and the guardrails all read the same thing:
the plan of a sweep joined with one bulk look at the backend (each point's state, ledger entry,
what the job says of itself, metrics, time and GPU-hours used, its round and rung), with the
sweep's stop and its search (the sweep's own, `Sweep.search`: no reader supplies it). It is
built once per sweep per phase (`looks.Observer`) and never by a reader itself; what it says is
`runner.analysis`'s.

- `model`: the values (`Observation`, `PointResult`, `SweepStop`);
- `stops`: the guardrails' rule (`max_failures`, `stop_when`) over an observation's points;
- `join`: the plan joined with a look, the pure function that makes an observation;
- `looks`: the `Observer`, one look per sweep and phase, and the choice of what a submit adopts;
- `sweeps`: the readers' entry, every sweep of a catalog observed once.
"""
