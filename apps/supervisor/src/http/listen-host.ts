import type { AppConfig } from '@switchyard/config';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * Dev mode (no API keys) serves loopback only; refusing a public HOST there is safer than
 * silently exposing an unauthenticated API.
 */
export function resolveListenHost(config: Pick<AppConfig, 'HOST' | 'API_KEYS'>): string {
  const devMode = config.API_KEYS.size === 0;
  if (!config.HOST) return devMode ? '127.0.0.1' : '0.0.0.0';
  if (devMode && !LOOPBACK.has(config.HOST)) {
    throw new Error(`HOST=${config.HOST} is not a loopback address, and API_KEYS is not set: refusing to serve an unauthenticated API beyond this machine`);
  }
  return config.HOST;
}
