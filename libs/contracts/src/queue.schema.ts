import { z } from 'zod';
import { TraceCarrierSchema } from './trace.schema';

/** Agent roles double as queue names: a worker consumes the roles in WORKER_QUEUES. */
export const AGENT_ROLES = ['extract', 'synthesize'] as const;
export const AgentRoleSchema = z.enum(AGENT_ROLES);
export type AgentRole = z.infer<typeof AgentRoleSchema>;

/**
 * A queue job only points at its task: Postgres holds the input, the checkpoints and the
 * lease, so a redelivered or rebuilt queue entry carries nothing that could go stale.
 */
export const TaskPayloadSchema = z.strictObject({
  tenant_id: z.string().min(1),
  job_id: z.uuid(),
  task_id: z.uuid(),
  trace: TraceCarrierSchema,
  /** Set while the task waits for an eligible model target (all down): when the wait began, and how often it looked. */
  waiting: z.strictObject({ since: z.number().int(), checks: z.number().int().min(0) }).optional(),
});
export type TaskPayload = z.infer<typeof TaskPayloadSchema>;

export const QueueJobSchemas = {
  extract: TaskPayloadSchema,
  synthesize: TaskPayloadSchema,
} as const satisfies Record<AgentRole, z.ZodType>;

export type QueueJobName = keyof typeof QueueJobSchemas;
export type QueueJobOf<N extends QueueJobName> = { name: N; data: z.infer<(typeof QueueJobSchemas)[N]> };
export type QueueJob = { [N in QueueJobName]: QueueJobOf<N> }[QueueJobName];

export function parseQueueJob<N extends QueueJobName>(name: N, data: unknown): QueueJobOf<N> {
  const schema = QueueJobSchemas[name];
  return { name, data: schema.parse(data) } as QueueJobOf<N>;
}
