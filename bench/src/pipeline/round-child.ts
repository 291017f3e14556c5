import { Cleanup } from '../support/resources';
import { runRawRound } from './raw-round';
import type { RoundRequest, RoundResult } from './settings';
import { runSwitchyardRound } from './switchyard-round';

/**
 * One round of the pipeline bench in a fresh process (forked by pipeline.bench.ts), so that
 * neither side inherits the other's heap, JIT state, pools or telemetry. Replies over IPC.
 */
export type RoundReply = { ok: true; result: RoundResult } | { ok: false; error: string };

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '') as RoundRequest;
  const cleanup = new Cleanup();
  const onSignal = () => {
    void cleanup.runAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let reply: RoundReply;
  try {
    const result = request.side === 'raw' ? await runRawRound(request) : await runSwitchyardRound(request, cleanup);
    reply = { ok: true, result };
  } catch (error) {
    reply = { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  } finally {
    await cleanup.runAll();
  }
  await new Promise<void>((resolve) => process.send!(reply, () => resolve()));
  process.exit(0);
}

void main();
