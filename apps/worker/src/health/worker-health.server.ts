import { createServer, type Server } from 'node:http';
import { PROMETHEUS_CONTENT_TYPE, type MetricsRegistry } from '@switchyard/observability';
import { MigrationsReadiness, checkDependencies, type RedisConnection } from '@switchyard/platform';
import type { DatabaseHandle } from '@switchyard/state';

/**
 * WORKER_PORT: /healthz (alive) and /readyz (Postgres and Redis answer, migrations applied) for an orchestrator's
 * probes, and /metrics (Prometheus text: this worker's upstream calls, ledger, process).
 */
export function startWorkerHealthServer(port: number, host: string, database: DatabaseHandle, redis: RedisConnection, metrics?: MetricsRegistry): Promise<Server> {
  const migrations = new MigrationsReadiness(database.pool);
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/healthz') return send(200, { status: 'ok' });
    if (req.method === 'GET' && req.url === '/metrics' && metrics) {
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' }).end(metrics.render());
      return;
    }
    if (req.method === 'GET' && req.url === '/readyz') {
      void checkDependencies(database, redis, undefined, migrations).then((checks) => {
        const ready = checks.every((c) => c.ok);
        send(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks });
      });
      return;
    }
    send(404, { error: { code: 'not_found', message: `no route ${req.method} ${req.url}` } });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
