import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '@switchyard/config';
import { describeError, type Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER } from '@switchyard/platform';
import { WebhookOutboxRepository } from '@switchyard/state';
import { ApiError } from '../http/api-error';
import { JobsService } from '../jobs/jobs.service';
import { CoalescedPass } from '../notifications/coalesced-pass';
import { JobNotifications } from '../notifications/job-notifications';
import { WebhookDelivery } from './webhook-delivery';
import { webhookSender } from './webhook-sender';

/** Runs the webhook delivery loop in this supervisor: every WEBHOOK_POLL_MS and on NOTIFY. */
@Injectable()
export class WebhookDeliveryService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly background: CoalescedPass | undefined;
  private readonly delivery: WebhookDelivery | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    outbox: WebhookOutboxRepository,
    jobs: JobsService,
    private readonly notifications: JobNotifications,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    const log = logger.child({ component: 'webhooks' });
    const secret = config.WEBHOOK_SECRET;
    // Without a secret no callback is accepted (400 at submit), so there is nothing to deliver.
    if (secret === undefined) return;
    const delivery = new WebhookDelivery({
      outbox,
      secret,
      logger: log,
      send: webhookSender(config.WEBHOOK_ALLOWED_HOSTS, config.WEBHOOK_TIMEOUT_MS),
      claimLeaseMs: 2 * config.WEBHOOK_TIMEOUT_MS + 5_000,
      // The body is the job exactly as GET /v1/jobs/:id shows it; a deleted job has nothing left to send.
      presentJob: (tenantId, jobId) => jobs.get(tenantId, jobId).catch((error: unknown) => (isNotFound(error) ? null : Promise.reject(error))),
    });
    this.delivery = delivery;
    this.background = new CoalescedPass(
      () => delivery.deliverDue(),
      config.WEBHOOK_POLL_MS,
      (error) => log.warn({ err: describeError(error) }, 'webhook pass failed; retrying next interval'),
    );
  }

  onApplicationBootstrap(): void {
    const background = this.background;
    if (!background) return;
    this.unsubscribe = this.notifications.on('webhook', () => void background.request());
    background.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.unsubscribe?.();
    this.delivery?.stop();
    await this.background?.stop();
  }
}

const isNotFound = (error: unknown): boolean => error instanceof ApiError && error.getStatus() === 404;
