"""Benchmarks: figures side by side with the obvious alternatives, measured in the same run.

Run from the repository root with `python -m tests.benchmarks` (add `--quick` for a smaller
run). They print a markdown table and write it to tests/benchmarks/RESULTS.md; they never assert
on time. pytest does not collect this package (see norecursedirs in pyproject.toml).
"""
