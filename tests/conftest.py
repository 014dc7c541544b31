from tests.support.broker import bootstrap_servers, fresh_broker  # noqa: F401  (fixtures)
