#!/usr/bin/env bash
# `npm run lint`: ESLint (typescript-eslint, flat config; installed apart in tools/lint, see its package.json)
# and the package guardrails (declared dependencies, no import cycles, no package importing an app).
# Unused locals and parameters are compiler errors (tsconfig.base.json): `npm run build` checks the sources,
# tsconfig.tests.json the tests (jest's swc transform strips types without checking them).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x tools/lint/node_modules/.bin/eslint ]; then
  npm install --prefix tools/lint --no-audit --no-fund --silent
fi
tools/lint/node_modules/.bin/eslint -c tools/lint/eslint.config.mjs --max-warnings 0 .
node_modules/.bin/tsc -p tsconfig.tests.json
node -r esbuild-register scripts/check-packages.ts
