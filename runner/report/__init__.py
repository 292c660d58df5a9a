"""Everything the runner shows: plans, submissions and status, as tables, markdown or JSON.

One module per report; `tables` is the one place that imports tabulate.
"""
