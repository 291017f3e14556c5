import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import { APP_CONFIG } from '@switchyard/platform';
import { TaskQueues, WorkflowCatalog } from '@switchyard/orchestration';
import { TaskRecoveryRepository } from '@switchyard/state';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { parseAdminTasksQuery } from './tasks.query';

/**
 * Operators' view of crash recovery: `GET /admin/tasks` lists stale and resumed tasks (or
 * any status), with owner, lease version, retry count and last heartbeat; `GET /admin/queues`
 * the BullMQ counts per role queue.
 */
@Controller('admin')
@UseGuards(AdminTokenGuard)
export class AdminTasksController {
  constructor(
    private readonly recovery: TaskRecoveryRepository,
    @Inject(TaskQueues) private readonly queues: TaskQueues,
    @Inject(WorkflowCatalog) private readonly catalog: WorkflowCatalog,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('tasks')
  async tasks(@Query() query: unknown) {
    const q = parseAdminTasksQuery(query);
    const rows = await this.recovery.listForAdmin({
      staleAfterMs: this.config.STALE_AFTER_MS,
      limit: q.limit,
      ...(q.status ? { status: q.status } : {}),
      ...(q.stale !== undefined ? { stale: q.stale } : {}),
      ...(q.resumed !== undefined ? { resumed: q.resumed } : {}),
    });
    return {
      stale_after_ms: this.config.STALE_AFTER_MS,
      tasks: rows.map((r) => ({
        task_id: r.taskId,
        job_id: r.jobId,
        tenant_id: r.tenantId,
        role: r.role,
        agent_id: r.agentId,
        status: r.status,
        stale: r.stale,
        lease_owner: r.leaseOwner,
        lease_version: r.leaseVersion,
        retry_count: r.retryCount,
        current_step: r.currentStep,
        total_steps: r.totalSteps,
        queue_job_id: r.queueJobId ?? r.taskId,
        last_heartbeat: r.updatedAt.toISOString(),
        error: r.error,
      })),
    };
  }

  @Get('queues')
  async queueCounts() {
    const entries = await Promise.all(
      [...new Set([...this.catalog.roles(), ...this.queues.roles()])].sort().map(async (role) => ({
        queue: role,
        counts: await this.queues.queue(role).getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'),
      })),
    );
    return { queues: entries };
  }
}
