import type { Logger } from '@switchyard/observability';
import type { WebhookOutboxRepository } from '@switchyard/state';
import { WEBHOOK_SIGNATURE_HEADER, signWebhook, webhookRetryDelayMs } from '@switchyard/workflows';
import type { SendWebhook } from './webhook-sender';

export interface WebhookDeliveryOptions {
  outbox: WebhookOutboxRepository;
  /** The job as `GET /v1/jobs/:id` shows it; null when it no longer exists. */
  presentJob: (tenantId: string, jobId: string) => Promise<unknown>;
  send: SendWebhook;
  secret: string;
  logger: Logger;
  /** Unix seconds now (the signature's `t`). */
  nowSeconds?: () => number;
  random?: () => number;
  batch?: number;
  /** How long a claimed row stays invisible to other loops: longer than one attempt. */
  claimLeaseMs: number;
}

/**
 * One pass of the webhook delivery loop: claims due outbox rows, POSTs each job signed, and
 * records the outcome - delivered on a 2xx, otherwise due again after `webhookRetryDelayMs`.
 * Delivery is at least once: a pass that dies after a POST but before recording it leaves the
 * row to be delivered again after the claim lease.
 */
export class WebhookDelivery {
  private stopping = false;

  constructor(private readonly options: WebhookDeliveryOptions) {}

  /** Finish the POST in progress and take no further row: the rest of the batch is due again after its claim lease. */
  stop(): void {
    this.stopping = true;
  }

  async deliverDue(): Promise<{ delivered: number; failed: number }> {
    const { outbox, logger } = this.options;
    const rows = await outbox.claimDue(this.options.batch ?? 20, this.options.claimLeaseMs);
    let delivered = 0;
    let failed = 0;
    for (const row of rows) {
      if (this.stopping) break;
      const ids = { job_id: row.jobId, tenant_id: row.tenantId, outbox_id: row.id, attempt: row.attempts };
      const job = await this.options.presentJob(row.tenantId, row.jobId);
      if (job === null) {
        // The job was deleted: nothing left to tell; close the row so it is not retried forever.
        await outbox.markDelivered(row.id, 0);
        continue;
      }
      const body = JSON.stringify(job);
      const t = (this.options.nowSeconds ?? (() => Math.floor(Date.now() / 1000)))();
      const result = await this.options.send(row.url, body, { [WEBHOOK_SIGNATURE_HEADER]: signWebhook(this.options.secret, body, t) });
      if (result.ok) {
        await outbox.markDelivered(row.id, result.status);
        delivered += 1;
        logger.info({ ...ids, http_status: result.status }, 'webhook delivered');
        continue;
      }
      const retryInMs = webhookRetryDelayMs(row.attempts, this.options.random ?? Math.random);
      await outbox.markFailed(row.id, result.error, result.status, retryInMs);
      failed += 1;
      logger.warn({ ...ids, http_status: result.status, error: result.error, retry_in_ms: retryInMs }, 'webhook delivery failed; will retry');
    }
    return { delivered, failed };
  }
}
