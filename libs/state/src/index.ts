export * from './schema';
export * from './database';
export * from './migrate';
export * from './repositories/task.repository';
