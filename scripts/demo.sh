#!/usr/bin/env bash
# npm run demo: installs what is missing, builds, then runs the demo (apps/demo), which
# checks Postgres and Redis, migrates, starts llm-sim + supervisor + 2 workers, submits
# three doc_review jobs, shows their progress and results, and stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null 2>&1; then
  echo "demo needs Node.js 20 or newer (node not found on PATH)" >&2
  exit 2
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "• installing dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
echo "• building"
npm run build --silent
exec node apps/demo/dist/main.js "$@"
