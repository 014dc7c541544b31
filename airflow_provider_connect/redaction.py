"""Keep secrets out of logs, exceptions and XComs.

Connector configs routinely carry credentials (database passwords, SASL JAAS configs, API keys). Anything
this provider prints or returns goes through these helpers first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "***"

# Matched against each dot/underscore separated config key. `key.converter` must stay visible, so a bare
# "key" is not secret; "api.key", "private.key", "ssl.key.password" are.
_SECRET_KEY = re.compile(
    r"(password|passwd|pwd|secret|token|credential|jaas|api[._-]?key|access[._-]?key|private[._-]?key"
    r"|ssl\.key\b|auth\.user\.info|authorization|bearer|cookie|session[._-]?key|sas[._-]?key)",
    re.IGNORECASE,
)
# A config value that is a config-provider reference holds no secret itself; keep it readable.
_PROVIDER_REFERENCE = re.compile(r"^\$\{[^}]+\}$")
_MIN_SECRET_LEN = 4  # scrubbing very short values would mangle unrelated text


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def redact_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of `config` with secret-looking values replaced by `***`."""
    if not config:
        return {}
    return {
        k: (REDACTED if is_secret_key(k) and v is not None and not _is_reference(v) else v) for k, v in config.items()
    }


def secret_values(config: Mapping[str, Any] | None) -> set[str]:
    """The values of `config` that `redact_config` would hide (to scrub them from free text)."""
    if not config:
        return set()
    return {
        str(v)
        for k, v in config.items()
        if is_secret_key(k) and v is not None and not _is_reference(v) and len(str(v)) >= _MIN_SECRET_LEN
    }


def scrub(text: str | None, secrets: Iterable[str]) -> str | None:
    """Replace every occurrence of each secret in `text` (longest first, so overlaps are fully hidden)."""
    if not text:
        return text
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret and len(secret) >= _MIN_SECRET_LEN:
            text = text.replace(secret, REDACTED)
    return text


def register_with_airflow(secrets: Iterable[str]) -> None:
    """Tell Airflow's log masker about the secrets too, so task logs hide them wherever they appear."""
    values = [s for s in secrets if s and len(s) >= _MIN_SECRET_LEN]
    if not values:
        return
    try:
        from airflow.sdk.log import mask_secret
    except ImportError:  # pragma: no cover - only outside Airflow
        return
    for value in values:
        mask_secret(value)


def truncate(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"... [{len(text) - limit} more characters truncated]"


def _is_reference(value: Any) -> bool:
    return isinstance(value, str) and bool(_PROVIDER_REFERENCE.match(value.strip()))
