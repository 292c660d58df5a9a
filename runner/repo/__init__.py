"""The repository side: git (the one GitPython user), GitHub Actions and its REST API, plan pins, saved specs."""
