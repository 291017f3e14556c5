import type { MetricsRegistry } from './metrics-registry';

/** The Node default process metrics (`process_`, `nodejs_`), uptime, and which service this is. */
export function registerProcessMetrics(registry: MetricsRegistry, service: string): void {
  registry.collectDefaultMetrics();
  registry.collected('process_uptime_seconds', 'How long the process has run, in seconds.', 'gauge', () => [[{}, Math.round(process.uptime() * 1000) / 1000]]);
  registry.collected('switchyard_build_info', 'Which Switchyard service this is; always 1.', 'gauge', () => [[{ service, node_version: process.version }, 1]], ['service', 'node_version']);
}
