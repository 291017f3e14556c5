#!/usr/bin/env node
// Entry of `npm run bench`: the benchmarks are TypeScript, built to ./dist by `npm run build`.
// Usage: node bench/run.js [pipeline|routing]...
require('./dist/main.js');
