"""The JSON schemas, shipped inside the package as `runner.schemas` (see setup.py); load them with
`importlib.resources`. Research repositories point their editors at these files too."""
