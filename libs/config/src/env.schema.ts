import { z } from 'zod';

const port = (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback);
const millis = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
const postgresUrl = z
  .string()
  .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL');
const redisUrl = z.string().refine((v) => /^rediss?:\/\//.test(v), 'must be a redis:// or rediss:// URL');

export interface RedisNodeAddress {
  host: string;
  port: number;
}

/**
 * `host:port,host:port,…` (IPv6 as `[::1]:26379`). The message names the entry by position,
 * never its text: a list pasted from a URL may carry a password.
 */
const redisNodeList = z
  .string()
  .optional()
  .transform((raw, ctx): RedisNodeAddress[] | undefined => {
    if (raw === undefined || raw.trim() === '') return undefined;
    const nodes: RedisNodeAddress[] = [];
    for (const [index, entry] of raw.split(',').entries()) {
      const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry.trim());
      const port = Number(match?.[3]);
      if (!match || port < 1 || port > 65_535) {
        ctx.addIssue({ code: 'custom', message: `entry ${index + 1} is not of the form host:port` });
        continue;
      }
      nodes.push({ host: match[1] ?? match[2]!, port });
    }
    return nodes;
  });

/** `tenant:key` pairs, comma-separated. A key maps to exactly one tenant. */
const apiKeys = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const keys = new Map<string, string>();
    if (!raw || raw.trim() === '') return keys;
    for (const [index, entry] of raw.split(',').entries()) {
      const trimmed = entry.trim();
      const sep = trimmed.indexOf(':');
      const tenant = trimmed.slice(0, sep);
      const key = trimmed.slice(sep + 1);
      if (sep <= 0 || key.length === 0) {
        ctx.addIssue({ code: 'custom', message: `entry ${index + 1} is not of the form tenant:key` });
        continue;
      }
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(tenant)) {
        ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: tenant may use letters, digits, _ . - (1-64 chars)` });
        continue;
      }
      if (key.length < 8) {
        ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: key for tenant "${tenant}" is shorter than 8 characters` });
        continue;
      }
      if (keys.has(key)) {
        ctx.addIssue({ code: 'custom', message: `entry ${index + 1}: the same key is given to two tenants` });
        continue;
      }
      keys.set(key, tenant);
    }
    return keys;
  });

/** An egress proxy URL; the message never repeats the value (it may hold credentials). */
const proxyUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// proxy URL' }).optional();

const queueList = z
  .string()
  .optional()
  .transform((raw) =>
    !raw || raw.trim() === '' || raw.trim() === 'all'
      ? 'all'
      : raw
          .split(',')
          .map((q) => q.trim())
          .filter((q) => q.length > 0),
  );

export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: postgresUrl.default('postgres://postgres@127.0.0.1:5432/switchyard'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(16),
  /**
   * `transaction` when DATABASE_URL goes through a transaction pooler (PgBouncer, RDS Proxy,
   * Supavisor): no named prepared statements and no session state on pooled connections.
   */
  DATABASE_POOL_MODE: z.enum(['session', 'transaction'], { error: 'must be session or transaction' }).default('session'),
  /** A direct (un-pooled) URL for `npm run db:migrate` (its advisory lock is session state); default DATABASE_URL. */
  MIGRATE_DATABASE_URL: postgresUrl.optional(),
  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379'),
  /** Redis through Sentinel: the sentinels to ask for the primary (password and db still come from REDIS_URL). */
  REDIS_SENTINELS: redisNodeList,
  REDIS_SENTINEL_MASTER: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be a Sentinel master name (letters, digits, _ . -)').default('mymaster'),
  /** Redis Cluster: seed nodes (password from REDIS_URL; a cluster has only db 0). */
  REDIS_CLUSTER_NODES: redisNodeList,
  /**
   * Deadline of a Redis command on a request path (enqueueing a submission, the gateway's
   * Idempotency-Key records and cache): with Redis away a request answers within it.
   */
  REDIS_REQUEST_TIMEOUT_MS: millis(2_000),
  /** Prefix of every BullMQ key. Braces make it a Redis Cluster hash tag. */
  QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_{}:.-]{1,64}$/).default('{switchyard}'),
  HOST: z.string().min(1).optional(),
  PORT: port(3000),
  WORKER_PORT: port(0),
  WORKER_QUEUES: queueList,
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(8),
  WORKER_ID: z.string().min(1).max(128).optional(),
  ROUTER_CONFIG: z.string().min(1).default('config/router.yaml'),
  /** One YAML file per job type (SPEC §6); watched, a bad file is rejected and the old set stays. */
  WORKFLOWS_DIR: z.string().min(1).default('config/workflows'),
  API_KEYS: apiKeys,
  /** Per-tenant running limits and daily budgets (SPEC §6); reloaded on change, a bad file keeps the old one. */
  TENANTS_CONFIG: z.string().min(1).default('config/tenants.yaml'),
  /** How often the admission pass runs besides on submit and on every job's end. */
  ADMISSION_INTERVAL_MS: millis(1_000),
  /** HMAC key of `X-Switchyard-Signature`; without it `callback_url` is refused (400). */
  WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Hosts (names or addresses) a callback may reach even when loopback or private, comma-separated. */
  WEBHOOK_ALLOWED_HOSTS: z
    .string()
    .optional()
    .transform((raw) => (raw ?? '').split(',').map((h) => h.trim()).filter((h) => h.length > 0)),
  /** One delivery attempt's time limit, and how often the delivery loop looks for due rows. */
  WEBHOOK_TIMEOUT_MS: millis(10_000),
  WEBHOOK_POLL_MS: millis(1_000),
  /** `GET /v1/jobs/:id/events`: comment heartbeat, and the poll that backs up LISTEN/NOTIFY. */
  EVENTS_HEARTBEAT_MS: millis(15_000),
  EVENTS_POLL_MS: millis(2_000),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * Liveness of running tasks. A worker heartbeats every HEARTBEAT_MS on its own timer (also
   * during a long model call); a task is taken over after STALE_AFTER_MS without one (four
   * missed heartbeats by default); the sweeper looks every SWEEP_INTERVAL_MS. Kill to resume
   * is about STALE_AFTER_MS - HEARTBEAT_MS/2 + SWEEP_INTERVAL_MS/2 (median ~7.5 s).
   */
  HEARTBEAT_MS: millis(2_000),
  STALE_AFTER_MS: millis(8_000),
  SWEEP_INTERVAL_MS: millis(1_000),
  /** Most stale tasks one sweep takes over, and most pending tasks one sweep checks against the queues. */
  SWEEP_BATCH: z.coerce.number().int().min(1).max(10_000).default(100),
  RECONCILE_BATCH: z.coerce.number().int().min(1).max(10_000).default(200),
  /** Off: this supervisor does not sweep (another one does). */
  SWEEPER_ENABLED: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /**
   * How long a durable task waits for an eligible model target when every one is down, before
   * failing. Long enough to outlast the 40-minute upstream outage of seed 000 several times over:
   * a waiting task holds no worker slot and makes no upstream call while nothing is eligible.
   */
  TARGET_WAIT_MAX_MS: millis(2 * 60 * 60_000),
  /** How long an optional task waits for an eligible model target before it is skipped (degradation). */
  OPTIONAL_TARGET_WAIT_MS: millis(5_000),
  TASK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5),
  MAX_BODY_BYTES: z.coerce.number().int().min(1_024).default(10 * 1024 * 1024),
  SHUTDOWN_GRACE_MS: millis(20_000),
  /**
   * Egress proxy for calls to cloud targets, by the usual names (lower case wins, as in curl
   * and undici); hosts in NO_PROXY are reached directly, and so are local targets, always.
   */
  HTTP_PROXY: proxyUrl,
  HTTPS_PROXY: proxyUrl,
  NO_PROXY: z.string().optional(),
  http_proxy: proxyUrl,
  https_proxy: proxyUrl,
  no_proxy: z.string().optional(),
  /** Read by the OpenTelemetry SDK itself; here only to know whether spans are exported. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_TRACES_EXPORTER: z.string().optional(),
});

export type AppConfig = z.output<typeof EnvSchema>;
export type WorkerQueues = AppConfig['WORKER_QUEUES'];

/** The egress proxy for upstream calls, or undefined when none is set. */
export function upstreamProxyFrom(config: AppConfig): { httpProxy?: string; httpsProxy?: string; noProxy?: string } | undefined {
  const httpProxy = config.http_proxy ?? config.HTTP_PROXY;
  const httpsProxy = config.https_proxy ?? config.HTTPS_PROXY;
  if (httpProxy === undefined && httpsProxy === undefined) return undefined;
  const noProxy = config.no_proxy ?? config.NO_PROXY;
  return { ...(httpProxy === undefined ? {} : { httpProxy }), ...(httpsProxy === undefined ? {} : { httpsProxy }), ...(noProxy === undefined ? {} : { noProxy }) };
}

/**
 * Where a LISTEN connection (session state) may go: DATABASE_URL in session mode; behind a
 * transaction pooler the direct MIGRATE_DATABASE_URL, or nowhere (the listener polls instead).
 */
export function listenDatabaseUrl(config: Pick<AppConfig, 'DATABASE_URL' | 'DATABASE_POOL_MODE' | 'MIGRATE_DATABASE_URL'>): string | undefined {
  return config.DATABASE_POOL_MODE === 'session' ? config.DATABASE_URL : config.MIGRATE_DATABASE_URL;
}

/** A proxy URL fit for a log line: scheme, host and port, credentials left out. */
export function describeProxy(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}`;
}
