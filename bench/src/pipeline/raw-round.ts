import { randomUUID } from 'node:crypto';
import { FlowProducer, Worker, type DefaultJobOptions, type FlowJob } from 'bullmq';
import { EnvSchema } from '@switchyard/config';
import { taskJobOptions } from '@switchyard/orchestration';
import { cpuSnapshot, cpuSpent } from '../support/cpu';
import { connectRedis, deleteKeys } from '../support/resources';
import { countdown, forEachLimit, secondsSince, warmUp } from './flow-helpers';
import type { RoundRequest, RoundResult } from './settings';

/**
 * The baseline: raw BullMQ flows of the doc_review shape (one parent, K children) with
 * no-op processors. No Postgres, no validation, no state: the queue's own cost.
 */

const PARENT_QUEUE = 'raw-parent';
const CHILD_QUEUE = 'raw-child';

function rawFlow(children: number, opts: DefaultJobOptions): FlowJob {
  const jobId = randomUUID();
  // The payload shape of a Switchyard task job, so both sides move the same bytes.
  const data = () => ({ tenant_id: 'bench', job_id: jobId, task_id: randomUUID(), trace: {} });
  return {
    name: 'parent',
    queueName: PARENT_QUEUE,
    data: data(),
    opts,
    children: Array.from({ length: children }, () => ({ name: 'child', queueName: CHILD_QUEUE, data: data(), opts })),
  };
}

async function timedFlows(request: RoundRequest, label: string, jobs: number): Promise<RoundResult> {
  const s = request.settings;
  const prefix = `${request.prefix}:raw-${label}`;
  const producerRedis = connectRedis('sy-bench-raw-producer');
  // One connection per worker: a little faster for raw BullMQ than sharing one (the apps share one).
  const workerRedis = [connectRedis('sy-bench-raw-child-worker'), connectRedis('sy-bench-raw-parent-worker')];
  const monitorRedis = connectRedis('sy-bench-raw-monitor');
  const flows = new FlowProducer({ connection: producerRedis, prefix });
  const done = countdown(jobs, s.roundTimeoutMs, 'raw parents');
  const noop = async () => ({ ok: true });
  const options = (connection: (typeof workerRedis)[number]) => ({ connection, prefix, concurrency: s.rawConcurrency });
  const workers = [new Worker(CHILD_QUEUE, noop, options(workerRedis[0]!)), new Worker(PARENT_QUEUE, noop, options(workerRedis[1]!))];
  workers[1]!.on('completed', () => done.hit());
  for (const worker of workers) {
    worker.on('failed', (job, error) => done.fail(new Error(`raw job ${job?.id} failed: ${error.message}`)));
    worker.on('error', (error) => done.fail(error));
  }
  const opts = s.rawJobOptions === 'product' ? taskJobOptions({ maxAttempts: EnvSchema.parse({}).TASK_MAX_ATTEMPTS }) : {};
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    const cpuBefore = await cpuSnapshot(monitorRedis);
    const start = process.hrtime.bigint();
    await forEachLimit(jobs, s.submitConcurrency, async () => {
      await flows.add(rawFlow(s.children, opts));
    });
    await done.promise;
    const seconds = secondsSince(start);
    const cpu = cpuSpent(cpuBefore, await cpuSnapshot(monitorRedis));
    const queueJobs = jobs * (s.children + 1);
    return { side: 'raw', label, jobs, queueJobs, seconds, tasksPerSecond: queueJobs / seconds, cpu };
  } finally {
    await Promise.allSettled([...workers.map((w) => w.close()), flows.close()]);
    producerRedis.disconnect();
    workerRedis.forEach((r) => r.disconnect());
    monitorRedis.disconnect();
    await deleteKeys(`${prefix}:`);
  }
}

export async function runRawRound(request: RoundRequest): Promise<RoundResult> {
  await warmUp(request.settings, (batch) => timedFlows(request, `${request.label}-warmup${batch}`, request.settings.warmupJobs));
  return timedFlows(request, request.label, request.settings.rawJobs);
}
