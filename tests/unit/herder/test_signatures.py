"""KIP-507 signature headers and the task-config body of the internal endpoints, with the reference's answers
(observed on the 3.9 oracle in distributed mode under the default sessioned protocol)."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from runtime.control.errors import HerderError
from runtime.herder.signatures import check_signature, signature_from_headers
from runtime.rest.internal_requests import parse_task_configs
from runtime.storage.kafka_config_store import SessionKey

KEY = SessionKey(base64.b64encode(b"k" * 32).decode(), "HmacSHA256", 0)
BODY = b'[{"a":"b"}]'


def headers(signature: str, algorithm: str = "HmacSHA256") -> dict[str, str]:
    # Starlette's headers are looked up in lower case
    return {"x-connect-authorization": signature, "x-connect-request-signature-algorithm": algorithm}


def signed(body: bytes) -> str:
    return base64.b64encode(hmac.new(b"k" * 32, body, hashlib.sha256).digest()).decode()


def failure(fn, *args) -> tuple[int, str | None]:
    with pytest.raises(HerderError) as caught:
        fn(*args)
    return caught.value.status, caught.value.message


def test_no_signature_unless_both_headers() -> None:
    assert signature_from_headers({}, BODY) is None
    assert signature_from_headers({"x-connect-authorization": "abc"}, BODY) is None


def test_header_parsing_errors_as_the_reference() -> None:
    assert failure(signature_from_headers, headers("abc", "Nope"), BODY) == (400, "Algorithm Nope not available")
    assert failure(signature_from_headers, headers("!!!"), BODY) == (400, "Illegal base64 character 21")
    assert signature_from_headers(headers("abc", "hmacsha256"), BODY) is not None  # JCA names: any case


def test_sessioned_checks_in_the_reference_order() -> None:
    allowed = ["HmacSHA256"]
    assert failure(check_signature, None, KEY, allowed) == (400, "Internal request missing required signature")
    status, message = failure(check_signature, signature_from_headers(headers("abc", "HmacSHA1"), BODY), KEY, allowed)
    assert status == 400 and message.startswith(
        "This worker does not support the 'HmacSHA1' key signing algorithm used by other workers. "
        "This worker is currently configured to use: [HmacSHA256]."
    )
    good = signature_from_headers(headers(signed(BODY)), BODY)
    assert failure(check_signature, good, None, allowed)[0] == 503
    assert failure(check_signature, signature_from_headers(headers("abc"), BODY), KEY, allowed) == (
        403,
        "Internal request contained invalid signature.",
    )
    check_signature(good, KEY, allowed)  # the exact bytes received are signed
    assert failure(check_signature, signature_from_headers(headers(signed(BODY)), BODY + b" "), KEY, allowed)[0] == 403


def test_task_configs_body() -> None:
    assert parse_task_configs(b'[{"a": "b", "n": 1, "t": true, "z": null}, {}]') == [
        {"a": "b", "n": "1", "t": "true", "z": None},
        {},
    ]
    assert parse_task_configs(b"[]") == []
    for raw in (b"", b"null", b'{"a": "b"}', b'["x"]', b"[1]", b'[{"a": {"b": 1}}]', b'[{"a": ["b"]}]', b'{"a": '):
        assert failure(parse_task_configs, raw)[0] == 400, raw
