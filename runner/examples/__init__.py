"""Example programs that sweeps can run; `sweeps/quickstart.yaml` runs `toy_trainer`."""
