#!/usr/bin/env bash
# Install the runner of this copy of beaker-sweep-runner: the files of the action being run, at
# the tag or commit the workflow's `uses:` names, with the hash-pinned dependencies of its
# requirements.txt. No resolver: nothing unpinned is installed where BEAKER_TOKEN may be set.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# SWEEP_RUNNER_EXTRAS=adaptive (the propose action): the lock that adds Optuna, hash-pinned too.
requirements="$root/requirements.txt"
if [ "${SWEEP_RUNNER_EXTRAS:-}" = "adaptive" ]; then
  requirements="$root/requirements-adaptive.txt"
fi
python -m pip install --quiet --require-hashes --no-deps -r "$requirements"
# No build isolation: it would fetch setuptools and setuptools-scm unpinned; their hash-pinned
# lock instead. The version comes from the tag, through .git_archival.txt in GitHub's tarball.
python -m pip install --quiet --require-hashes --no-deps -r "$root/requirements-build.txt"
python -m pip install --quiet --no-deps --no-build-isolation "$root"
