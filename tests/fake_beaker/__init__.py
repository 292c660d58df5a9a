"""A fake Beaker server speaking beaker-py's real wire protocols (gRPC + HTTPS) on 127.0.0.1.

In-process: ``with FakeBeaker() as fake: ...`` or the ``fake_beaker`` pytest fixture from
``tests.fake_beaker.fixtures``. Out of process: ``python -m tests.fake_beaker --help``.
"""

from .certs import CertBundle, default_bundle
from .records import Experiment
from .server import FakeBeaker

__all__ = ["CertBundle", "Experiment", "FakeBeaker", "default_bundle"]
