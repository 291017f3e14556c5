export * from './schema';
export * from './database';
export * from './migrate';
export * from './repositories/task.repository';
export * from './repositories/ledger.repository';
export * from './repositories/task-recovery.repository';
export * from './repositories/model-call-result.repository';
export * from './repositories/job-stats.repository';
