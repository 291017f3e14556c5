export * from './agent-task-state.schema';
export * from './model-call-ledger.schema';
export * from './model-call-result.schema';
export * from './webhook.schema';
export * from './job-degradation.schema';
