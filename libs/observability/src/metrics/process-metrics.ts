import type { MetricsRegistry } from './metrics-registry';

/** Uptime, memory and CPU of this process, read at scrape time, under the conventional `process_` names. */
export function registerProcessMetrics(registry: MetricsRegistry, service: string): void {
  const started = Date.now() - process.uptime() * 1000;
  registry.collected('process_start_time_seconds', 'Start time of the process since the Unix epoch, in seconds.', 'gauge', () => [[{}, Math.round(started / 1000)]]);
  registry.collected('process_uptime_seconds', 'How long the process has run, in seconds.', 'gauge', () => [[{}, Math.round(process.uptime() * 1000) / 1000]]);
  registry.collected('process_resident_memory_bytes', 'Resident set size, in bytes.', 'gauge', () => [[{}, process.memoryUsage.rss()]]);
  registry.collected('process_heap_used_bytes', 'V8 heap in use, in bytes.', 'gauge', () => [[{}, process.memoryUsage().heapUsed]]);
  registry.collected('process_cpu_seconds_total', 'User and system CPU time spent, in seconds.', 'counter', () => {
    const { user, system } = process.cpuUsage();
    return [[{}, (user + system) / 1e6]];
  });
  registry.collected('switchyard_build_info', 'Which Switchyard service this is; always 1.', 'gauge', () => [[{ service, node_version: process.version }, 1]]);
}
