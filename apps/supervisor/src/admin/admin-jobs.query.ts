import { z } from 'zod';
import { SafeString, TaskStatusSchema, ValidationError, toFieldIssues } from '@switchyard/contracts';
import { JobListCursorParam } from '../jobs/job-list.query';

export const AdminJobListQuerySchema = z.strictObject({
  status: TaskStatusSchema.optional(),
  type: SafeString.min(1).max(64).optional(),
  tenant: SafeString.min(1).max(64).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: JobListCursorParam,
});
export type AdminJobListQuery = z.infer<typeof AdminJobListQuerySchema>;

/** `GET /admin/jobs` query: optional `status`, `type`, `tenant` filters, `limit` (1–200, default 50), `cursor`. */
export function parseAdminJobListQuery(query: unknown): AdminJobListQuery {
  const parsed = AdminJobListQuerySchema.safeParse(query ?? {});
  if (!parsed.success) throw new ValidationError(toFieldIssues(parsed.error, 'query'));
  return parsed.data;
}
