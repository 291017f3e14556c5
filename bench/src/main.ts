import { cpus } from 'node:os';
import { runCallPathBench } from './call-path.bench';
import { runClassifierBench } from './classifier.bench';
import { runCrashResumeBench } from './crash-resume.bench';
import { runEconomicsBench } from './economics.bench';
import { runFleetLimitBench } from './fleet-limit.bench';
import { runGatewayBench } from './gateway.bench';
import { runPipelineE2eBench } from './pipeline-e2e.bench';
import { runPipelineScaleBench } from './pipeline-scale.bench';
import { runPipelineBench } from './pipeline/pipeline.bench';
import { runPoolModeBench } from './pool-mode.bench';
import { runRoutingBench } from './routing.bench';
import { runRowsBench } from './rows-1m.bench';
import { runTracingBench } from './tracing.bench';

/**
 * `npm run bench` (every bench; with BENCH_QUICK=1 all but pipeline-scale and rows-1m) or `node bench/run.js pipeline|routing|crash-resume|gateway|pool-mode|fleet-limit|tracing|economics|pipeline-e2e|pipeline-scale|rows-1m|call-path|classifier` (some of them).
 * Exits 2 when a bench could not run. A missed target prints FAIL and exits 0, unless
 * BENCH_STRICT=1 (then 1): a measurement on a shared machine is not a build failure by default.
 */
const BENCHES = {
  pipeline: async () => (await runPipelineBench()).pass,
  routing: async () => runRoutingBench().pass,
  'crash-resume': async () => (await runCrashResumeBench()).pass,
  gateway: async () => (await runGatewayBench()).pass,
  'pool-mode': runPoolModeBench,
  'fleet-limit': async () => (await runFleetLimitBench()).pass,
  tracing: async () => (await runTracingBench()).pass,
  economics: async () => (await runEconomicsBench()).pass,
  'pipeline-e2e': async () => (await runPipelineE2eBench()).pass,
  'pipeline-scale': async () => (await runPipelineScaleBench()).pass,
  'rows-1m': async () => (await runRowsBench()).pass,
  'call-path': async () => (await runCallPathBench()).pass,
  classifier: async () => runClassifierBench().pass,
} as const;
type BenchName = keyof typeof BENCHES;
/** The scale figures (pipeline-scale: minutes per worker count; rows-1m: 1,000,000 generated rows, about 10 minutes here): BENCH_QUICK=1 leaves them out. */
const LONG: readonly BenchName[] = ['pipeline-scale', 'rows-1m'];

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => !(a in BENCHES));
  if (unknown.length > 0) {
    console.error(`unknown bench: ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
    return 2;
  }
  const quick = Boolean(process.env.BENCH_QUICK);
  const selected = (args.length > 0 ? args : Object.keys(BENCHES).filter((name) => !quick || !LONG.includes(name as BenchName))) as BenchName[];
  console.log(`Switchyard benchmarks: ${selected.join(', ')} | node ${process.version} | ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown cpu'}) | ${new Date().toISOString()}`);
  const started = Date.now();
  const verdicts: [BenchName, boolean][] = [];
  for (const name of selected) verdicts.push([name, await BENCHES[name]()]);
  console.log(`\n${verdicts.map(([name, pass]) => `${name}: ${pass ? 'PASS' : 'FAIL'}`).join(' | ')} | total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return verdicts.every(([, pass]) => pass) || !process.env.BENCH_STRICT ? 0 : 1;
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
