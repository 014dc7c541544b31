#!/usr/bin/env bash
# Installs everything into .venv and runs the main job: a standalone worker with its embedded broker
# and a demo pipeline (SequenceSource -> topic demo-events -> RecordingSink into a JSON-lines file).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[all]'
mkdir -p /tmp/connect-demo
echo "REST API on http://127.0.0.1:8083 ; records land in /tmp/connect-demo/demo-events.jsonl ; Ctrl-C stops"
exec .venv/bin/connect-runtime standalone examples/worker.properties examples/sequence-source.json examples/recording-sink.json
