export const TASK_FLOW_PRODUCER = 'tasks';
