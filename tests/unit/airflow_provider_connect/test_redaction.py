"""Secrets kept out of XComs and logs: configs redacted by key, secret values scrubbed from text."""

from airflow_provider_connect.redaction import redact_config, scrub, secret_values


def test_redact_config_hides_secret_looking_values_only():
    config = {
        "connection.password": "pw-1",
        "database.user": "bob",
        "key.converter": "JsonConverter",
        "sasl.jaas.config": "x required password=y;",
        "aws.secret.access.key": "AKIA...",
        "api.key": "k-1",
        "ssl.key.password": "kp",
        "token": "t",
        "vault.password": "${vault:secret/db:pw}",
        "topics": "t1",
        "basic.auth.user.info": "u:p",
    }
    red = redact_config(config)
    hidden = {k for k, v in red.items() if v == "***"}
    assert hidden == {
        "connection.password",
        "sasl.jaas.config",
        "aws.secret.access.key",
        "api.key",
        "ssl.key.password",
        "token",
        "basic.auth.user.info",
    }
    assert red["vault.password"] == "${vault:secret/db:pw}"  # a reference, not a secret
    assert config["connection.password"] == "pw-1"  # input untouched


def test_scrub_removes_secret_values_from_text():
    secrets = secret_values({"db.password": "hunter2-long", "db.host": "h"})
    assert scrub("failed: password hunter2-long rejected", secrets) == "failed: password *** rejected"
    assert scrub(None, secrets) is None
