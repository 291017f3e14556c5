import { randomUUID } from 'node:crypto';
import { FlowProducer, QueueEvents } from 'bullmq';
import { connectRedis } from '../support/resources';
import { forEachLimit, secondsSince } from '../pipeline/flow-helpers';

/**
 * The BullMQ-only sides of the end-to-end bench: flows shaped like a doc_review job (one
 * parent, one child per document), submitted from this process with a fixed number of flows
 * in flight, each lane waiting for its parent's completion before the next (QueueEvents).
 */

export const FLOW_PARENT_QUEUE = 'flow-parent';
export const FLOW_CHILD_QUEUE = 'flow-child';

/** A Switchyard task job's fields, plus the prompt the floor's model call sends. */
export interface FlowJobData {
  tenant_id: string;
  job_id: string;
  task_id: string;
  trace: Record<string, string>;
  prompt: string;
}

export const QUESTION = 'What does the contract say about the warranty period?';

/** The documents of job `n`: short contract clauses, as every side sends them; `n` makes the texts unique. */
export function documentsOf(n: number, count: number): { id: string; text: string }[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `doc-${n}-${i + 1}`,
    text: `Document ${i + 1}. The warranty period is ${12 + i} months.\n\nClaims need an invoice and a serial number.`,
  }));
}

/** What one closed-loop run measured: wall time, and each job's time from submission to its end. */
export interface LoopTiming {
  seconds: number;
  latenciesMs: number[];
}

/** Runs `jobs` jobs with `inFlight` lanes, each lane submitting one job and waiting for its end. */
export async function closedLoop(jobs: number, inFlight: number, runJob: () => Promise<void>): Promise<LoopTiming> {
  const latenciesMs: number[] = [];
  const start = process.hrtime.bigint();
  await forEachLimit(jobs, inFlight, async () => {
    const submitted = process.hrtime.bigint();
    await runJob();
    latenciesMs.push(Number(process.hrtime.bigint() - submitted) / 1e6);
  });
  return { seconds: secondsSince(start), latenciesMs };
}

/** Ends of jobs announced by some event source, awaited by id (an end may come before the wait). */
export class JobEnds {
  private readonly waiting = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
  private readonly early = new Map<string, Error | null>();

  settle(id: string, error: Error | null = null): void {
    const waiter = this.waiting.get(id);
    if (!waiter) {
      this.early.set(id, error);
      return;
    }
    this.waiting.delete(id);
    if (error) waiter.reject(error);
    else waiter.resolve();
  }

  wait(id: string, timeoutMs: number): Promise<void> {
    if (this.early.has(id)) {
      const error = this.early.get(id);
      this.early.delete(id);
      return error ? Promise.reject(error) : Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`job ${id} did not end within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
  }
}

/** A producer of doc_review-shaped flows under `prefix`, and the QueueEvents that see their parents end. */
export class FlowDriver {
  private readonly ends = new JobEnds();
  private sequence = 0;

  private constructor(
    private readonly producer: FlowProducer,
    private readonly events: QueueEvents,
    private readonly connections: { disconnect(): void }[],
  ) {
    events.on('completed', ({ jobId }) => this.ends.settle(jobId));
    events.on('failed', ({ jobId, failedReason }) => this.ends.settle(jobId, new Error(`flow ${jobId} failed: ${failedReason}`)));
  }

  static async start(prefix: string): Promise<FlowDriver> {
    const producerRedis = connectRedis('sy-bench-flow-producer');
    const eventsRedis = connectRedis('sy-bench-flow-events');
    const events = new QueueEvents(FLOW_PARENT_QUEUE, { connection: eventsRedis, prefix });
    await events.waitUntilReady();
    return new FlowDriver(new FlowProducer({ connection: producerRedis, prefix }), events, [producerRedis, eventsRedis]);
  }

  /** Adds one flow (parent + `children`) and resolves when its parent has completed. */
  async runJob(children: number, timeoutMs: number): Promise<void> {
    const jobId = randomUUID();
    this.sequence += 1;
    const documents = documentsOf(this.sequence, children);
    const data = (prompt: string): FlowJobData => ({ tenant_id: 'bench', job_id: jobId, task_id: randomUUID(), trace: {}, prompt });
    const ended = this.ends.wait(jobId, timeoutMs);
    await this.producer.add({
      name: 'parent',
      queueName: FLOW_PARENT_QUEUE,
      data: data(`Question: ${QUESTION}\n\nFindings:\n${documents.map((d) => `- ${d.id}: ${d.text.slice(0, 60)}`).join('\n')}`),
      opts: { jobId },
      children: documents.map((d) => ({ name: 'child', queueName: FLOW_CHILD_QUEUE, data: data(`Question: ${QUESTION}\n\nDocument "${d.id}":\n\n${d.text}`) })),
    });
    await ended;
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.producer.close(), this.events.close()]);
    for (const connection of this.connections) connection.disconnect();
  }
}
