import type { Queue } from 'bullmq';
import type { AgentRole } from '@switchyard/contracts';

/** One BullMQ queue per agent role, as the sweeper and the admin view reach them. */
export const TASK_QUEUES = Symbol('TASK_QUEUES');
export type TaskQueues = ReadonlyMap<AgentRole, Queue>;
