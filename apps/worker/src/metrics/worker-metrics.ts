import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { MetricsRegistry, TASK_BUCKETS_SECONDS, type Histogram } from '@switchyard/observability';
import type { StepObservation } from '@switchyard/orchestration';
import { registerTargetMetrics } from '@switchyard/platform';
import { Router } from '@switchyard/router';

/**
 * Seconds a queue job waited before a worker took it: from when it was due (added, plus its
 * delay) to when processing started. Never negative (clock skew between Redis and us).
 */
export function queueWaitSeconds(job: Pick<Job, 'timestamp' | 'processedOn' | 'delay'>, now: number): number {
  const due = job.timestamp + (job.delay ?? 0);
  return Math.max(0, ((job.processedOn ?? now) - due) / 1000);
}

/** What a worker measures: queue wait, task and step duration (histograms), and its router's target gauges. */
@Injectable()
export class WorkerMetrics {
  private readonly queueWait: Histogram;
  private readonly taskDuration: Histogram;
  private readonly stepDuration: Histogram;

  constructor(@Inject(MetricsRegistry) registry: MetricsRegistry, @Inject(Router) router: Router) {
    this.queueWait = registry.histogram('switchyard_queue_wait_seconds', 'Time a task waited in its role queue before a worker took it.', ['role'], TASK_BUCKETS_SECONDS);
    this.taskDuration = registry.histogram('switchyard_task_duration_seconds', 'Time of one run of a task, by role and outcome.', ['role', 'outcome'], TASK_BUCKETS_SECONDS);
    this.stepDuration = registry.histogram('switchyard_step_duration_seconds', 'Time of one step of a task, by role, step kind and outcome.', ['role', 'kind', 'outcome'], TASK_BUCKETS_SECONDS);
    registerTargetMetrics(registry, router);
  }

  taskTaken(role: string, job: Pick<Job, 'timestamp' | 'processedOn' | 'delay'>, now: number): void {
    this.queueWait.observe({ role }, queueWaitSeconds(job, now));
  }

  taskRan(role: string, outcome: string, seconds: number): void {
    this.taskDuration.observe({ role, outcome }, seconds);
  }

  readonly stepRan = (step: StepObservation): void => {
    this.stepDuration.observe({ role: step.role, kind: step.kind, outcome: step.outcome }, step.seconds);
  };
}
