import { cpus } from 'node:os';
import { runPipelineBench } from './pipeline.bench';
import { runRoutingBench } from './routing.bench';

/**
 * `npm run bench` (all benches) or `node bench/run.js pipeline|routing` (some of them).
 * Exits 1 when a bench misses its target, 2 when a bench could not run.
 */
const BENCHES = {
  pipeline: async () => (await runPipelineBench()).pass,
  routing: async () => runRoutingBench().pass,
} as const;
type BenchName = keyof typeof BENCHES;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => !(a in BENCHES));
  if (unknown.length > 0) {
    console.error(`unknown bench: ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
    return 2;
  }
  const selected = (args.length > 0 ? args : Object.keys(BENCHES)) as BenchName[];
  console.log(`Switchyard benchmarks: ${selected.join(', ')} | node ${process.version} | ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown cpu'}) | ${new Date().toISOString()}`);
  const started = Date.now();
  const verdicts: [BenchName, boolean][] = [];
  for (const name of selected) verdicts.push([name, await BENCHES[name]()]);
  console.log(`\n${verdicts.map(([name, pass]) => `${name}: ${pass ? 'PASS' : 'FAIL'}`).join(' | ')} | total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return verdicts.every(([, pass]) => pass) ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 2;
  },
);
