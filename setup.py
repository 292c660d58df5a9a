"""Packaging that pyproject.toml's keys cannot say: discover every `runner` package AND ship the
top-level `schemas/` directory as `runner.schemas`.

The schemas stay where research repositories' editor modelines and the docs point
(`schemas/*.json`), and the package reads them with importlib.resources, so a wheel, an sdist
and an editable install all carry the very same files. Everything else is in pyproject.toml.
"""

from __future__ import annotations

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["runner", "runner.*"]), "runner.schemas"],
    package_dir={"runner.schemas": "schemas"},
)
