"""A small certificate authority made in the test: a CA, a server certificate for localhost and 127.0.0.1, a
client certificate, written as PEM or PKCS#12 files (the REST listener's TLS tests, unit and integration)."""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def certificate(subject: str, key, issuer: str, issuer_key, ca: bool, sans: list[x509.GeneralName] | None = None):
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


class Pki:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca = certificate("test-ca", self.ca_key, "test-ca", self.ca_key, ca=True)
        self.server_key = ec.generate_private_key(ec.SECP256R1())
        self.server = certificate(
            "localhost",
            self.server_key,
            "test-ca",
            self.ca_key,
            ca=False,
            sans=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
        )
        self.client_key = ec.generate_private_key(ec.SECP256R1())
        self.client = certificate("client", self.client_key, "test-ca", self.ca_key, ca=False)

    @staticmethod
    def key_pem(key, password: bytes | None = None) -> bytes:
        encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)

    @staticmethod
    def cert_pem(*certs) -> bytes:
        return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)

    def write(self, name: str, data: bytes) -> str:
        path = self.folder / name
        path.write_bytes(data)
        return str(path)

    def ca_file(self) -> str:
        return self.write("ca.pem", self.cert_pem(self.ca))

    def server_pem_store(self, password: bytes | None = None) -> str:
        return self.write("server.pem", self.key_pem(self.server_key, password) + self.cert_pem(self.server, self.ca))

    def client_pem_store(self) -> str:
        return self.write("client.pem", self.key_pem(self.client_key) + self.cert_pem(self.client, self.ca))

    def p12(self, name: str, key, cert, password: bytes) -> str:
        data = pkcs12.serialize_key_and_certificates(
            b"connect", key, cert, [self.ca], serialization.BestAvailableEncryption(password)
        )
        return self.write(name, data)
