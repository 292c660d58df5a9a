"""TLS material for the fake Beaker: one private CA per process, one server certificate.

gRPC reads ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`` once per process, when the first TLS channel is
made, so every fake server in a process must present certificates from the same CA. Use
:func:`default_bundle` unless you really need a separate one (e.g. in another process).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import trustme

SERVER_IDENTITIES = ("127.0.0.1", "localhost")


@dataclass(frozen=True)
class CertBundle:
    """Paths of a CA certificate and of a server certificate chain + key it signed."""

    ca_path: Path
    cert_chain_path: Path
    key_path: Path

    @property
    def cert_chain_pem(self) -> bytes:
        return self.cert_chain_path.read_bytes()

    @property
    def key_pem(self) -> bytes:
        return self.key_path.read_bytes()

    def client_env(self) -> dict[str, str]:
        """Environment variables that make requests and gRPC trust this CA."""
        return {
            "REQUESTS_CA_BUNDLE": str(self.ca_path),
            "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(self.ca_path),
        }


def mint_bundle(directory: Path) -> CertBundle:
    """Create a fresh CA and a server certificate for 127.0.0.1/localhost in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA(organization_name="fake-beaker test CA")
    leaf = ca.issue_cert(*SERVER_IDENTITIES)
    bundle = CertBundle(
        ca_path=directory / "ca.pem",
        cert_chain_path=directory / "server-chain.pem",
        key_path=directory / "server-key.pem",
    )
    ca.cert_pem.write_to_path(str(bundle.ca_path))
    bundle.cert_chain_path.write_bytes(b"".join(pem.bytes() for pem in leaf.cert_chain_pems))
    leaf.private_key_pem.write_to_path(str(bundle.key_path))
    return bundle


_default: CertBundle | None = None
_default_lock = threading.Lock()


def default_bundle() -> CertBundle:
    """The process-wide bundle, minted on first use and deleted when the process exits."""
    global _default
    with _default_lock:
        if _default is None:
            directory = Path(tempfile.mkdtemp(prefix="fake-beaker-ca-"))
            atexit.register(shutil.rmtree, directory, ignore_errors=True)
            _default = mint_bundle(directory)
        return _default
