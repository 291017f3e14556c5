import { z } from 'zod';

/**
 * `queued`: accepted but not yet admitted (its tenant or the fleet is at its running limit, SPEC §6).
 * `skipped`: an optional task given up under degradation (no eligible target, out of retries, timed out); its dependents go on without it.
 */
export const TASK_STATUSES = ['pending', 'running', 'success', 'failed', 'paused', 'cancelled', 'queued', 'skipped'] as const;
export const TaskStatusSchema = z.enum(TASK_STATUSES);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['success', 'failed', 'cancelled', 'skipped'];

/** One upstream attempt of one step, as recorded in `route_targets`. */
export const RouteRecordSchema = z.object({
  step: z.number().int(),
  target: z.string(),
  model: z.string(),
  rule: z.string(),
  outcome: z.enum(['ok', 'bad_output', 'error']),
  latency_ms: z.number(),
  error: z.string().optional(),
});
export type RouteRecord = z.infer<typeof RouteRecordSchema>;
