#!/usr/bin/env bash
# Installs the test dependencies into .venv and runs the whole suite (unit, integration, conformance,
# Spark and Airflow DAG tests). Needs Python 3.11+ and Java 17 (for Spark and the reference oracle).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'
export PATH="$PWD/.venv/bin:$PATH"
exec .venv/bin/python -m pytest -p no:cacheprovider -n 2 --dist loadfile "$@"
