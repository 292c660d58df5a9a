"""The search: what to run next (hydra's Sweeper), beside the backends that run it (the
Launcher). Pure functions of the `params.sample` section, its lock and the results observed;
the commands that write the lock (`lock`, `propose`) and the report that reads the results
call them, and nothing here reads the ledger, the plan or a backend.

- `points`: a number in [0, 1) as a parameter's value, a point's conditional parameters, and
  what a point so far says (`Told`);
- `draw`: random, Sobol and Halton draws (scipy and numpy, the `[search]` extra, only there);
- `adaptive`: Optuna's TPE and GP proposals, fANOVA and the study file (the `[adaptive]` extra,
  only there);
- `ranking`: the one `best()`, the best so far and importance by main effects;
- `rungs`: successive halving's synchronous promotions; `asha`: its asynchronous ones (ASHA),
  each decision a `Cut` that a record can show;
- `rounds`: the next round of an adaptive search, from its lock and what was observed.

The `params.sample` section, its vocabulary (`Method`, `Kind`, `Goal`) and the lock's codec
stay in `runner.manifest.sample`: the loader reads the lock without importing the search.
"""
