import { z } from 'zod';
import { TaskStatusSchema, ValidationError, toFieldIssues } from '@switchyard/contracts';
import type { JobListCursor } from '@switchyard/state';

const CursorSchema = z.object({ c: z.iso.datetime(), id: z.uuid() });

export function encodeCursor(cursor: JobListCursor): string {
  return Buffer.from(JSON.stringify({ c: cursor.createdAt.toISOString(), id: cursor.taskId })).toString('base64url');
}

function decodeCursor(raw: string): JobListCursor | null {
  try {
    const parsed = CursorSchema.safeParse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    return parsed.success ? { createdAt: new Date(parsed.data.c), taskId: parsed.data.id } : null;
  } catch {
    return null;
  }
}

/** The `cursor` query parameter: the `next_cursor` of the previous page. */
export const JobListCursorParam = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    if (raw === undefined || raw === '') return undefined;
    const cursor = decodeCursor(raw);
    if (!cursor) {
      ctx.addIssue({ code: 'custom', message: 'not a cursor returned by this API' });
      return z.NEVER;
    }
    return cursor;
  });

export const JobListQuerySchema = z.strictObject({
  status: TaskStatusSchema.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: JobListCursorParam,
});
export type JobListQuery = z.infer<typeof JobListQuerySchema>;

export function parseJobListQuery(query: unknown): JobListQuery {
  const parsed = JobListQuerySchema.safeParse(query ?? {});
  if (!parsed.success) throw new ValidationError(toFieldIssues(parsed.error, 'query'));
  return parsed.data;
}
