import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import IORedis, { type Redis } from 'ioredis';
import type { AppConfig } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { RouterRuntime } from './router.provider';
import { Router, loadRouterConfig, readFleetReports } from '@switchyard/router';
import { deleteKeysWithPrefix, overridesKey, routerFleetKeyPrefix, snapshotKey } from './index';

/** Two processes' routers on one queue prefix, each with its own RouterRuntime, against real Redis. */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONFIG = resolve(__dirname, '../../../config/router.yaml');

async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('RouterRuntime: fleet-wide overrides and snapshots (real Redis)', () => {
  const prefix = `{sy-test-${randomBytes(4).toString('hex')}}`;
  const logger = createLogger('router-overrides-test', 'silent');
  const connections: Redis[] = [];
  const runtimes: RouterRuntime[] = [];

  function startProcess(name: string, role: 'supervisor' | 'worker', resyncMs = 3_600_000): { router: Router; runtime: RouterRuntime } {
    const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: null, connectionName: `${prefix}-${name}` });
    connections.push(redis);
    const router = new Router({ config: loadRouterConfig(CONFIG), secrets: () => undefined, logger });
    const config = { QUEUE_PREFIX: prefix, ROUTER_CONFIG: CONFIG } as AppConfig;
    // A resync timer of an hour: these tests see the channel and the reconnect reload, not the timer.
    const runtime = new RouterRuntime(router, config, logger, redis, {
      identity: { processId: name, role },
      overridesResyncMs: resyncMs,
      snapshotIntervalMs: 200,
      probesAndWatcher: false,
    });
    runtimes.push(runtime);
    return { router, runtime };
  }

  const drained = (router: Router, target: string) => router.snapshot().find((t) => t.name === target)!.drained;
  const forced = (router: Router) => router.snapshot().find((t) => t.forcedPrimary)?.name ?? null;

  afterAll(async () => {
    await Promise.allSettled(runtimes.map((r) => r.onApplicationShutdown()));
    const cleaner = connections[0]!;
    await deleteKeysWithPrefix(cleaner, prefix);
    await Promise.allSettled(connections.map((c) => c.quit()));
  });

  it('a drain, enable and force-primary through one process reach the other', async () => {
    const a = startProcess('supervisor-a', 'supervisor');
    const b = startProcess('worker-b', 'worker');
    await a.runtime.onApplicationBootstrap();
    await b.runtime.onApplicationBootstrap();

    await a.runtime.applyOverride({ action: 'drain', target: 'local_vllm_7b' });
    expect(drained(a.router, 'local_vllm_7b')).toBe(true);
    await until('worker-b to see the drain', () => drained(b.router, 'local_vllm_7b'));
    expect(await connections[0]!.hgetall(overridesKey(prefix))).toEqual({ 'drained:local_vllm_7b': expect.any(String) });
    // The drained target is out of the worker's decisions.
    expect(b.router.decide({ task_type: 'extract', complexity: 'low' } as never).target.name).not.toBe('local_vllm_7b');

    await a.runtime.applyOverride({ action: 'force_primary', target: 'cloud_main' });
    await until('worker-b to see the forced primary', () => forced(b.router) === 'cloud_main');
    // Whatever is forced, sensitive work stays local.
    expect(b.router.decide({ task_type: 'extract', sensitivity: 'sensitive' } as never).target.type).toBe('local');

    await a.runtime.applyOverride({ action: 'force_primary', target: null });
    await a.runtime.applyOverride({ action: 'enable', target: 'local_vllm_7b' });
    await until('worker-b to see the enable', () => !drained(b.router, 'local_vllm_7b') && forced(b.router) === null);
    expect(await connections[0]!.hgetall(overridesKey(prefix))).toEqual({});

    // Read-only mode: no process makes a model call until it is switched off again.
    await a.runtime.applyOverride({ action: 'read_only', enabled: true });
    expect(a.router.readOnly).toBe(true);
    await until('worker-b to see read-only mode', () => b.router.readOnly);
    expect(() => b.router.decide({ task_type: 'extract', complexity: 'low' } as never)).toThrow(/^read-only mode/);
    expect(await connections[0]!.hgetall(overridesKey(prefix))).toEqual({ read_only: expect.any(String) });
    await a.runtime.applyOverride({ action: 'read_only', enabled: false });
    await until('worker-b to leave read-only mode', () => !b.router.readOnly);
    expect(await connections[0]!.hgetall(overridesKey(prefix))).toEqual({});
  });

  it('a process that missed the announcement (subscriber cut) reloads the hash when it reconnects', async () => {
    const a = runtimes[0]!;
    const b = runtimes[1]!;
    const routerB = (b as unknown as { router: Router }).router;
    const subscriber = b.overrides.subscriberConnection as Redis;
    const syncsBefore = b.overrides.syncs;
    subscriber.disconnect();
    await until('the subscriber to close', () => subscriber.status === 'end');

    await a.applyOverride({ action: 'drain', target: 'local_vllm_32b' });
    await a.applyOverride({ action: 'force_primary', target: 'local_vllm_7b' });
    // Missed: worker-b's channel was down and its timer is an hour away.
    expect(drained(routerB, 'local_vllm_32b')).toBe(false);
    expect(b.overrides.syncs).toBe(syncsBefore);

    await subscriber.connect();
    await until('worker-b to reload after reconnecting', () => drained(routerB, 'local_vllm_32b') && forced(routerB) === 'local_vllm_7b');

    // And the channel works again after the reconnect.
    await a.applyOverride({ action: 'enable', target: 'local_vllm_32b' });
    await until('worker-b to see the enable over the channel again', () => !drained(routerB, 'local_vllm_32b'));
    await a.applyOverride({ action: 'force_primary', target: null });
    await until('worker-b to clear the forced primary', () => forced(routerB) === null);
  });

  it('a process started later loads the overrides at start, ignoring targets its config lacks', async () => {
    const admin = connections[0]!;
    await admin.hset(overridesKey(prefix), 'drained:local_vllm_7b', new Date().toISOString(), 'drained:retired_target', 'x');
    const c = startProcess('worker-c', 'worker');
    await c.runtime.onApplicationBootstrap();
    expect(drained(c.router, 'local_vllm_7b')).toBe(true);
    expect(c.router.snapshot().map((t) => t.name)).not.toContain('retired_target');
    await runtimes[0]!.applyOverride({ action: 'enable', target: 'local_vllm_7b' });
    await until('worker-c to see the enable', () => !drained(c.router, 'local_vllm_7b'));
  });

  it('re-reads the hash on its timer even with no announcement at all', async () => {
    const d = startProcess('worker-d', 'worker', 100);
    await d.runtime.onApplicationBootstrap();
    // A write that nobody announces (e.g. an operator editing the hash by hand).
    await connections[0]!.hset(overridesKey(prefix), 'drained:cloud_main', new Date().toISOString());
    await until('worker-d to pick the silent change up', () => drained(d.router, 'cloud_main'));
    await connections[0]!.hdel(overridesKey(prefix), 'drained:cloud_main');
    await until('worker-d to pick the silent removal up', () => !drained(d.router, 'cloud_main'));
  });

  it('publishes each process snapshot with a TTL, and the fleet view shows every process', async () => {
    const supervisor = runtimes[0]!;
    const reports = await until('every process to report', async () => {
      const found = await readFleetReports(connections[0]!, routerFleetKeyPrefix(prefix));
      return ['supervisor-a', 'worker-b', 'worker-c', 'worker-d'].every((id) => found.some((r) => r.processId === id)) ? found : undefined;
    });
    expect(reports.find((r) => r.processId === 'worker-b')!.role).toBe('worker');
    expect(await connections[0]!.pttl(snapshotKey(prefix, 'worker-b'))).toBeGreaterThan(0);
    const fleet = await supervisor.fleet();
    const seven = fleet.get('local_vllm_7b')!;
    expect(seven.processes.map((p) => p.processId)).toEqual(expect.arrayContaining(['supervisor-a', 'worker-b', 'worker-c', 'worker-d']));
    expect(seven.processes.find((p) => p.processId === 'supervisor-a')!.ageMs).toBe(0);
    expect(seven.aggregate.processes).toBeGreaterThanOrEqual(4);

    // A stopped process removes its report.
    await runtimes[3]!.onApplicationShutdown();
    expect((await readFleetReports(connections[0]!, routerFleetKeyPrefix(prefix))).map((r) => r.processId)).not.toContain('worker-d');
  });

  it('failures seen by one process lower the health score another routes on, without the other calling the target', async () => {
    const routerA = (runtimes[0] as unknown as { router: Router }).router;
    const routerB = (runtimes[1] as unknown as { router: Router }).router;
    const meta = { task_type: 'extract', complexity: 'low' } as never;
    const scoreIn = (router: Router) => router.explain(meta).candidates.find((c) => c.target === 'local_vllm_7b')!.score!;
    const before = scoreIn(routerB);

    // Answers process A could not use: each one costs the target health there.
    for (let i = 0; i < 3; i++) routerA.reportBadOutput('local_vllm_7b');
    expect(routerA.snapshot().find((t) => t.name === 'local_vllm_7b')!.score).toBeLessThan(100);

    await until('worker-b to route on supervisor-a\'s lower health of the target', () => scoreIn(routerB) < before);
    // Worker-b learned it from the fleet, not from its own traffic.
    const ownView = routerB.snapshot().find((t) => t.name === 'local_vllm_7b')!;
    expect(ownView.score).toBe(100);
    expect(ownView.requests).toBe(0);
    expect(scoreIn(routerB)).toBe(scoreIn(routerA));
  });
});
