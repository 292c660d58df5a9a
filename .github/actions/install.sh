#!/usr/bin/env bash
# Install the runner of this copy of beaker-sweep-runner: the files of the action being run, at
# the tag or commit the workflow's `uses:` names, with the hash-pinned dependencies of its
# requirements.txt. No resolver: nothing unpinned is installed where BEAKER_TOKEN may be set.
#
# `install.sh --cache-key` prints `key=...` for actions/cache instead: pip's cache is keyed by
# the hash of the locks it installs (this one and the build lock) (and the OS and Python). A cached download still has to match its sha256 in
# the lock, so the cache saves time and cannot change what is installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# SWEEP_RUNNER_EXTRAS=adaptive (the propose action): the lock that adds Optuna, hash-pinned too.
requirements="$root/requirements.txt"
if [ "${SWEEP_RUNNER_EXTRAS:-}" = "adaptive" ]; then
  requirements="$root/requirements-adaptive.txt"
fi
if [ "${1:-}" = "--cache-key" ]; then
  lock="$(cat "$requirements" "$root/requirements-build.txt" | sha256sum | cut -c1-64)"
  python_version="$(python -c 'import platform; print(platform.python_version())')"
  echo "key=sweep-runner-pip-${RUNNER_OS:-Linux}-py${python_version}-${lock}"
  exit 0
fi
python -m pip install --quiet --require-hashes --no-deps -r "$requirements"
# No build isolation: it would fetch setuptools and setuptools-scm unpinned; their hash-pinned
# lock instead. The version comes from the tag, through .git_archival.txt in GitHub's tarball.
python -m pip install --quiet --require-hashes --no-deps -r "$root/requirements-build.txt"
python -m pip install --quiet --no-deps --no-build-isolation "$root"
