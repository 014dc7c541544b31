"""KIP-507 signatures of internal requests (`POST /connectors/{c}/tasks`, `PUT /connectors/{c}/fence`).

The reference parses the signature headers in the REST resource, before the herder sees the request: an unknown
algorithm or a bad base64 signature is a 400 in both modes. Whether a signature is required (and checked against
the session key) is the distributed herder's call: only while the group runs the sessioned protocol.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..control.errors import BadRequest, Forbidden, HerderError

SIGNATURE_HEADER = "X-Connect-Authorization"
SIGNATURE_ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"

# JCA Mac names (looked up case-insensitively, as the JDK's providers do) -> hashlib digests
_MACS = {
    "hmacmd5": "md5",
    "hmacsha1": "sha1",
    "hmacsha224": "sha224",
    "hmacsha256": "sha256",
    "hmacsha384": "sha384",
    "hmacsha512": "sha512",
    "hmacsha512/224": "sha512_224",
    "hmacsha512/256": "sha512_256",
    "hmacsha3-224": "sha3_224",
    "hmacsha3-256": "sha3_256",
    "hmacsha3-384": "sha3_384",
    "hmacsha3-512": "sha3_512",
}
_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


@dataclass(frozen=True)
class RequestSignature:
    """A signature sent with an internal request, over the exact body bytes received."""

    algorithm: str  # as sent
    digest: str  # hashlib name
    signature: bytes
    body: bytes

    def is_valid(self, key: bytes) -> bool:
        expected = hmac.new(key, self.body, getattr(hashlib, self.digest)).digest()
        return hmac.compare_digest(expected, self.signature)


def signature_from_headers(headers: Mapping[str, str], body: bytes) -> RequestSignature | None:
    """The request's signature; None unless both headers are present. 400 for an algorithm the JDK does not
    know (`Algorithm <a> not available`) or a signature that is not strict base64 (Java's decoder's text)."""
    algorithm = headers.get(SIGNATURE_ALGORITHM_HEADER.lower())
    encoded = headers.get(SIGNATURE_HEADER.lower())
    if algorithm is None or encoded is None:
        return None
    digest = _MACS.get(algorithm.lower())
    if digest is None:
        raise BadRequest(f"Algorithm {algorithm} not available")
    return RequestSignature(algorithm, digest, _java_base64(encoded), body)


def _java_base64(text: str) -> bytes:
    """java.util.Base64's basic decoder: its error messages for the usual faults."""
    raw = text.encode("latin-1", errors="replace")
    stripped = raw.rstrip(b"=")
    for byte in stripped:
        if byte not in _BASE64:
            raise BadRequest(f"Illegal base64 character {byte:x}")
    if len(stripped) % 4 == 1:
        raise BadRequest("Last unit does not have enough valid bits")
    try:  # padding is optional for Java
        return base64.b64decode(stripped + b"=" * (-len(stripped) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest("Input byte array has wrong 4-byte ending unit") from None


def check_signature(signature: RequestSignature | None, session_key: Any, allowed: list[str]) -> None:
    """The sessioned protocol's checks on the worker that receives the request, in the reference's order:
    missing (400), algorithm not in `inter.worker.verification.algorithms` (400), no session key read yet
    (503), wrong signature (403)."""
    if signature is None:
        raise BadRequest("Internal request missing required signature")
    if signature.algorithm not in allowed:
        raise BadRequest(
            f"This worker does not support the '{signature.algorithm}' key signing algorithm used by other workers. "
            f"This worker is currently configured to use: [{', '.join(allowed)}]. "
            "Check that all workers' configuration files permit the same set of signature algorithms, "
            "and correct any misconfigured worker and restart it."
        )
    if session_key is None:
        raise HerderError(
            "This worker is still starting up and has not been able to read a session key from the config topic yet",
            503,
        )
    if not signature.is_valid(base64.b64decode(session_key.key)):
        raise Forbidden("Internal request contained invalid signature.")
