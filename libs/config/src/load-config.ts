import { EnvSchema, type AppConfig } from './env.schema';

export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(`invalid environment: ${problems.map((p) => `${p.variable}: ${p.message}`).join('; ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Parses the environment once. Blank values count as unset, so `FOO=` means the default. */
export function loadConfig(env: Env = process.env): AppConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = EnvSchema.safeParse(present);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => ({ variable: String(issue.path[0] ?? '(env)'), message: issue.message })),
    );
  }
  const config = result.data;
  if (config.STALE_AFTER_MS <= config.HEARTBEAT_MS * 2) {
    throw new ConfigError([
      { variable: 'STALE_AFTER_MS', message: `must exceed twice HEARTBEAT_MS (${config.HEARTBEAT_MS}) so a live worker is never presumed dead` },
    ]);
  }
  if (config.REDIS_SENTINELS && config.REDIS_CLUSTER_NODES) {
    throw new ConfigError([{ variable: 'REDIS_CLUSTER_NODES', message: 'cannot be set together with REDIS_SENTINELS: choose Sentinel or Cluster' }]);
  }
  if (config.REDIS_CLUSTER_NODES && redisDatabaseIndex(config.REDIS_URL) !== 0) {
    throw new ConfigError([{ variable: 'REDIS_URL', message: 'names a database other than 0, which a Redis Cluster does not have (REDIS_CLUSTER_NODES is set)' }]);
  }
  return config;
}

/** The db index of a redis:// URL's path (`/2` → 2), 0 when none. */
export function redisDatabaseIndex(url: string): number {
  const path = new URL(url).pathname.replace(/^\//, '');
  return path === '' ? 0 : Number(path);
}

/** For process entry points: a bad environment ends the process with a message naming the variable. */
export function loadConfigOrExit(env: Env = process.env): AppConfig {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`switchyard: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
}

/**
 * Secrets named by other config files (e.g. a router target's `api_key_env`) are read
 * through this one door, so nothing else touches process.env.
 */
export function secretsFromEnv(env: Env = process.env): (name: string) => string | undefined {
  return (name) => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };
}
