"""One module per subcommand, where argparse stops.

Each module has `register(subparsers)`, whose parser's `run(args)` unpacks the arguments once
and calls the module's typed command function (`validate(directory, paths) -> int`, ...). The
heavy parts of the runner are imported inside those functions, so `--help` stays fast.
"""
