import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { AdminJobRepository } from '@switchyard/state';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { ApiError } from '../http/api-error';
import { encodeCursor } from '../jobs/job-list.query';
import { assertJobId } from '../jobs/jobs.service';
import { presentAdminJob, presentAdminJobListItem } from './admin-job.presenter';
import { parseAdminJobListQuery } from './admin-jobs.query';

/** Operators' view of every tenant's jobs (the dashboard's jobs list and job view). */
@Controller('admin/jobs')
@UseGuards(AdminTokenGuard)
export class AdminJobsController {
  constructor(private readonly jobs: AdminJobRepository) {}

  @Get()
  async list(@Query() query: unknown) {
    const q = parseAdminJobListQuery(query);
    const roots = await this.jobs.listJobs({
      limit: q.limit + 1,
      ...(q.status ? { status: q.status } : {}),
      ...(q.type ? { type: q.type } : {}),
      ...(q.tenant ? { tenantId: q.tenant } : {}),
      ...(q.cursor ? { cursor: q.cursor } : {}),
    });
    const page = roots.slice(0, q.limit);
    const summaries = await this.jobs.summarizeJobs(page.map((r) => r.taskId));
    const last = page.at(-1);
    return {
      jobs: page.map((root) => presentAdminJobListItem(root, summaries.get(root.taskId) ?? { total: 0, completed: 0, costUsd: 0 })),
      next_cursor: roots.length > q.limit && last ? encodeCursor({ createdAt: last.createdAt, taskId: last.taskId }) : null,
    };
  }

  @Get(':id')
  async get(@Param('id') id: string) {
    assertJobId(id);
    const rows = await this.jobs.findJobTree(id);
    if (rows.length === 0 || rows[0]?.parentTaskId !== null) throw ApiError.notFound(`job ${id}`);
    return presentAdminJob(rows, await this.jobs.jobAttempts(id));
  }
}
