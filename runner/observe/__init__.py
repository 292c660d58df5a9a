"""One observation of a sweep, which every reader shares.

`status`, `report`, `propose`, the notices and the guardrails all read the same thing: the plan
of a sweep joined with one bulk look at the backend (each point's state, ledger entry, what the
job says of itself, metrics, time and GPU-hours used, its round), with the sweep's stop and its
search. It is built once per sweep per phase (`looks.Observer`) and never by a reader itself.

- `model`: the values (`Observation`, `PointResult`, `SweepStop`, `Search`);
- `stops`: the guardrails' rule (`max_failures`, `stop_when`) over an observation's points;
- `join`: the plan joined with a look, the pure function that makes an observation;
- `findings`: what an observation says (ranking, importance, best so far, each point as told);
- `looks`: the `Observer`, one look per sweep and phase, and the choice of what a submit adopts;
- `sweeps`: the readers' entry, every sweep of a catalog observed once.
"""
