import { z } from 'zod';
import { TraceCarrierSchema } from './trace.schema';

/**
 * A queue job only points at its task: Postgres holds the input, the checkpoints and the
 * lease, so a redelivered or rebuilt queue entry carries nothing that could go stale. The
 * queue is named after the task's role (a workflow's agent); every role shares this payload.
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
