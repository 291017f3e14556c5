import { Module } from '@nestjs/common';
import { DATABASE } from '@switchyard/platform';
import { TaskRecoveryRepository, type DatabaseHandle } from '@switchyard/state';
import { StaleTaskSweeper } from './stale-task.sweeper';

/** The stale-task sweeper; it enqueues through the role queues of WorkflowsModule. */
@Module({
  providers: [
    { provide: TaskRecoveryRepository, inject: [DATABASE], useFactory: (db: DatabaseHandle) => new TaskRecoveryRepository(db.db) },
    StaleTaskSweeper,
  ],
  exports: [TaskRecoveryRepository, StaleTaskSweeper],
})
export class SweeperModule {}
