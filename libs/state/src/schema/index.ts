export * from './agent-task-state.schema';
