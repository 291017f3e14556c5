import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import { describeError, type Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER, TenantsConfigStore } from '@switchyard/platform';
import { AdmissionRepository } from '@switchyard/state';
import { decideAdmission } from '@switchyard/workflows';
import { CoalescedPass } from '../notifications/coalesced-pass';
import { JobNotifications } from '../notifications/job-notifications';
import { JOB_STARTER, type JobStarter } from './job-starter';

/**
 * Admits queued jobs (SPEC §6): on submit, whenever a job ends (NOTIFY from the task table's
 * trigger) and every ADMISSION_INTERVAL_MS. Each pass is one transaction under an advisory
 * lock, so several supervisors never admit past a limit; the jobs a pass admits are started
 * by this supervisor. If starting fails, the tasks are pending without queue entries and the
 * sweeper's reconcile pass enqueues them.
 */
@Injectable()
export class AdmissionService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly background: CoalescedPass;
  private unsubscribe: (() => void) | undefined;
  private readonly log: Logger;

  constructor(
    private readonly repository: AdmissionRepository,
    private readonly tenants: TenantsConfigStore,
    private readonly notifications: JobNotifications,
    @Inject(JOB_STARTER) private readonly starter: JobStarter,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'admission' });
    this.background = new CoalescedPass(
      () => this.admitIfQueued(),
      config.ADMISSION_INTERVAL_MS,
      (error) => this.log.warn({ err: describeError(error) }, 'admission pass failed; retrying next interval'),
    );
  }

  onApplicationBootstrap(): void {
    this.unsubscribe = this.notifications.on('admission', () => void this.background.request());
    this.background.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.unsubscribe?.();
    await this.background.stop();
  }

  /** The running limits a new job of `tenantId` is admitted under: its tenant's and the fleet's. */
  limitsFor(tenantId: string): { tenant: number; global: number } {
    return { tenant: this.tenants.limitsOf(tenantId).max_running_jobs, global: this.tenants.current().global.max_running_jobs };
  }

  /**
   * Runs one pass now and returns the admitted job ids; every admitted job except those in
   * `startedByCaller` is started here (the submitting request starts its own job itself).
   */
  async admitNow(startedByCaller: readonly string[] = []): Promise<string[]> {
    const config = this.tenants.current();
    const globalLimit = config.global.max_running_jobs;
    const limitOf = (tenant: string) => this.tenants.limitsOf(tenant).max_running_jobs;
    const admitted = await this.repository.admit(globalLimit, (snapshot) => decideAdmission({ ...snapshot, globalLimit, limitOf }), { global: globalLimit, of: limitOf });
    for (const job of admitted) {
      if (startedByCaller.includes(job.jobId)) continue;
      try {
        await this.starter.start(job);
        this.log.info({ job_id: job.jobId }, 'queued job admitted');
      } catch (error) {
        this.log.warn({ job_id: job.jobId, err: describeError(error) }, 'admitted job could not be enqueued; the sweeper will enqueue its tasks');
      }
    }
    return admitted.map((job) => job.jobId);
  }

  /**
   * The pass at a job's end and on the interval: most of the time no job is queued, and one
   * unlocked probe then stands in for the locked transaction. A job queued just after the probe
   * is admitted by its own submission's pass.
   */
  async admitIfQueued(): Promise<string[]> {
    return (await this.repository.anyQueued()) ? this.admitNow() : [];
  }
}
