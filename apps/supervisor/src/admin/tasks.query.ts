import { z } from 'zod';
import { TaskStatusSchema, ValidationError, toFieldIssues } from '@switchyard/contracts';

const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

export const AdminTasksQuerySchema = z.strictObject({
  status: TaskStatusSchema.optional(),
  stale: flag.optional(),
  resumed: flag.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export type AdminTasksQuery = z.infer<typeof AdminTasksQuerySchema>;

export function parseAdminTasksQuery(query: unknown): AdminTasksQuery {
  const parsed = AdminTasksQuerySchema.safeParse(query ?? {});
  if (!parsed.success) throw new ValidationError(toFieldIssues(parsed.error, 'query'));
  return parsed.data;
}
