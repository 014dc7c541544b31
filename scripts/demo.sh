#!/usr/bin/env bash
# Installs everything into .venv and runs the main job: a standalone worker with its embedded broker and a
# real pipeline: a sample dataset (examples/data/orders.jsonl) through FileStreamSource into the topic
# `orders`, and the dlt sink loading it into a DuckDB file. Ends by showing the loaded rows.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[all]'
rm -rf /tmp/connect-demo && mkdir -p /tmp/connect-demo
echo "Worker REST API on http://127.0.0.1:8083 (log: /tmp/connect-demo/worker.log)"
.venv/bin/connect-runtime standalone examples/worker.properties \
    examples/orders-file-source.json examples/orders-duckdb-sink.json >/tmp/connect-demo/worker.log 2>&1 &
worker=$!
trap 'kill "$worker" 2>/dev/null; wait "$worker" 2>/dev/null || true' EXIT
.venv/bin/python examples/show_loaded_rows.py --expect "$(wc -l <examples/data/orders.jsonl)" || {
    tail -n 30 /tmp/connect-demo/worker.log >&2
    exit 1
}
