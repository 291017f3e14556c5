#!/usr/bin/env node
// Entry of `npm run bench`: the benchmarks are TypeScript, built to ./dist by `npm run build`.
// Usage: node bench/run.js [pipeline|routing]...
// eslint-disable-next-line @typescript-eslint/no-require-imports -- plain CommonJS entry
require('./dist/main.js');
