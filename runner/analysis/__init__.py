"""What an observation of a sweep says: its analysis, apart from the facts (`runner.observe`).

- `aiming`: each point against the sweep's aims (feasibility, the best, the Pareto front);
- `told`: each point as a search is told it (`propose`, the Optuna study);
- `findings`: the results page's findings (ranking, importance, best so far, rungs);
- `curves`: the learning curves read from the points' reporting lines;
- `against`: one revision of a sweep's results against another.

Pure: nothing here lists a backend or reads a file; `runner.observe` made the observation.
"""
