#!/usr/bin/env bash
# Install the runner of this copy of beaker-sweep-runner: the files of the action being run, at
# the tag or commit the workflow's `uses:` names, with the hash-pinned dependencies of its
# requirements.txt. No resolver: nothing unpinned is installed where BEAKER_TOKEN may be set.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python -m pip install --quiet --require-hashes --no-deps -r "$root/requirements.txt"
# No build isolation: it would fetch setuptools unpinned; the Python of setup-python has it.
python -m pip install --quiet --no-deps --no-build-isolation "$root"
