export * from './request-meta.schema';
export * from './summary.schema';
export * from './trace.schema';
export * from './job.schema';
export * from './queue.schema';
export * from './task-state';
export * from './validation';
export * from './submission';
