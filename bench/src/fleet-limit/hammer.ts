import IORedis from 'ioredis';
import { createLogger } from '@switchyard/observability';
import { parseRouterConfig, RedisFleetLimiter, Router, type SlotResult, type TargetConfig, type TargetLimiter } from '@switchyard/router';

/**
 * One process of the fleet-limit bench: a Router with the Redis fleet limiter, `loops`
 * concurrent callers hammering the one target for `durationMs`. Prints one JSON line:
 * the time each acquire took (the limiter's added latency), calls made, refusals.
 */
interface HammerArgs {
  endpoint: string;
  model: string;
  maxConcurrency: number;
  loops: number;
  durationMs: number;
  prefix: string;
  processId: string;
  redisUrl: string;
}

class TimedLimiter implements TargetLimiter {
  readonly acquireMs: number[] = [];
  refusals = 0;
  constructor(private readonly inner: TargetLimiter) {}
  async acquire(target: TargetConfig, tokens: number): Promise<SlotResult> {
    const t0 = process.hrtime.bigint();
    const result = await this.inner.acquire(target, tokens);
    this.acquireMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (!result.granted) this.refusals += 1;
    return result;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '{}') as HammerArgs;
  const redis = new IORedis(args.redisUrl, { maxRetriesPerRequest: 1, connectionName: `sy-bench-${args.processId}` });
  const logger = createLogger('fleet-limit-bench', 'error');
  const config = parseRouterConfig(
    `
router:
  probes: {enabled: false}
  fleet_limits: {slot_wait_ms: 60000, slot_poll_ms: 20}
  targets:
    - {name: gpu, type: local, endpoint: "${args.endpoint}", model: ${args.model}, max_concurrency: ${args.maxConcurrency}, context_window: 32768, cost_per_1k_tokens: {input: 0, output: 0}}
  routes:
    - {name: all, when: {all_else: true}, target: gpu}
`,
    'fleet-limit bench',
  );
  const limiter = new TimedLimiter(
    new RedisFleetLimiter({
      redis,
      keyPrefix: `{${args.prefix.replace(/[{}]/g, '')}:router-limits}:`,
      processId: args.processId,
      settings: () => ({ slotTtlMs: 5_000, redisTimeoutMs: 1_000, slotLingerMs: 25 }),
      liveProcesses: () => Promise.resolve(4),
      logger,
    }),
  );
  const router = new Router({ config, secrets: () => undefined, logger, limiter });
  const end = Date.now() + args.durationMs;
  let calls = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: args.loops }, async (_, loop) => {
      while (Date.now() < end) {
        try {
          await router.chat({ meta: { task_type: 'chat', complexity: 'low', sensitivity: 'internal', priority: 'normal', tags: [] }, messages: [{ role: 'user', content: `fleet ${args.processId} ${loop} ${calls}` }], maxTokens: 16 });
          calls += 1;
        } catch {
          failures += 1;
        }
      }
    }),
  );
  await router.close();
  redis.disconnect();
  process.stdout.write(`${JSON.stringify({ processId: args.processId, calls, failures, refusals: limiter.refusals, acquireMs: limiter.acquireMs })}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
