#!/usr/bin/env bash
# npm start: the Worker locally on http://127.0.0.1:8787, its ledger (a SQLite Durable Object) kept by wrangler under .wrangler/.
# Settings come from .dev.vars when you made one, else from .dev.vars.example.
set -euo pipefail
cd "$(dirname "$0")/.."
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
vars=.dev.vars
[ -f "$vars" ] || vars=.dev.vars.example
exec wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" --env-file "$vars" "$@"
