import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { MetricsRegistry } from '@switchyard/observability';
import type { DatabaseHandle } from '@switchyard/state';
import { startWorkerHealthServer } from './worker-health.server';

describe('worker health server /metrics', () => {
  let server: Server | undefined;

  afterEach(() => {
    server?.close();
    server = undefined;
  });

  const start = async (metrics?: MetricsRegistry) => {
    // /metrics touches neither Postgres nor Redis.
    server = await startWorkerHealthServer(0, '127.0.0.1', {} as DatabaseHandle, {} as Redis, metrics);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  it('serves the registry as Prometheus text', async () => {
    const registry = new MetricsRegistry();
    registry.counter('switchyard_upstream_calls_total', 'Upstream attempts.', ['target', 'outcome']).inc({ target: 'local_vllm_7b', outcome: 'ok' }, 3);
    const res = await fetch(`${await start(registry)}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await res.text()).toContain('switchyard_upstream_calls_total{target="local_vllm_7b",outcome="ok"} 3\n');
  });

  it('answers 404 for /metrics without a registry', async () => {
    expect((await fetch(`${await start()}/metrics`)).status).toBe(404);
  });
});
