#!/usr/bin/env bash
# Installs the test dependencies into .venv and runs the whole suite (unit, integration, conformance,
# Spark and Airflow DAG tests). Needs Python 3.11+ and Java 17 (for Spark and the reference oracle).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# Servers the integration tests start on loopback (Prometheus scrapes a worker; PostgreSQL holds the
# metadata database of a real Airflow deployment; Chromium, driven through chromium-driver, looks at the
# provider's page in Airflow's UI), from Debian's packages.
if ! command -v prometheus >/dev/null || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
    || ! command -v chromedriver >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus postgresql chromium chromium-driver >/dev/null
    else
        echo "scripts/test.sh: install Debian's prometheus, postgresql, chromium and chromium-driver packages (needs root)" >&2
    fi
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'
export PATH="$PWD/.venv/bin:$PATH"
# Static checks first (pyproject.toml configures them): lint and formatting
.venv/bin/ruff check --quiet .
.venv/bin/ruff format --check --quiet .
# and types (mypy; pyproject.toml's [tool.mypy] says what it checks)
.venv/bin/mypy --no-error-summary
exec .venv/bin/python -m pytest -p no:cacheprovider -n 2 --dist loadfile "$@"
