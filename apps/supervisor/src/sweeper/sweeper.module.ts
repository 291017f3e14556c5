import { Module } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { AGENT_ROLES, type AgentRole } from '@switchyard/contracts';
import { DATABASE } from '@switchyard/platform';
import { TaskRecoveryRepository, type DatabaseHandle } from '@switchyard/state';
import { StaleTaskSweeper } from './stale-task.sweeper';
import { TASK_QUEUES, type TaskQueues } from './task-queues';

/** The stale-task sweeper and the role queues it (and the admin view) writes to and reads. */
@Module({
  imports: AGENT_ROLES.map((role) => BullModule.registerQueue({ name: role })),
  providers: [
    { provide: TaskRecoveryRepository, inject: [DATABASE], useFactory: (db: DatabaseHandle) => new TaskRecoveryRepository(db.db) },
    {
      provide: TASK_QUEUES,
      inject: AGENT_ROLES.map((role) => getQueueToken(role)),
      useFactory: (...queues: Queue[]): TaskQueues => new Map(AGENT_ROLES.map((role, i) => [role, queues[i]!] as [AgentRole, Queue])),
    },
    StaleTaskSweeper,
  ],
  exports: [TASK_QUEUES, TaskRecoveryRepository, StaleTaskSweeper],
})
export class SweeperModule {}
