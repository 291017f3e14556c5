import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { listenDatabaseUrl, type AppConfig } from '@switchyard/config';
import { describeError, type Logger } from '@switchyard/observability';
import { APP_CONFIG, LOGGER } from '@switchyard/platform';

/** The channels the task table's trigger notifies (migration `job_notify_and_webhook_outbox_triggers`). */
export const JOB_CHANNELS = {
  /** A task or job row changed status or step; the payload is the job id. */
  job: 'switchyard_job',
  /** A job reached a terminal status: a running slot is free. */
  admission: 'switchyard_admission',
  /** A webhook outbox row was written. */
  webhook: 'switchyard_webhook',
} as const;
export type JobChannel = keyof typeof JOB_CHANNELS;

const RECONNECT_MS = 1_000;

/**
 * One LISTEN connection per supervisor, shared by every SSE client, the admission pass and the
 * webhook loop. Notifications are hints: whoever listens also polls, so a lost connection (and
 * the notifications sent meanwhile) only delays things until the next poll or reconnect.
 */
@Injectable()
export class JobNotifications implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly events = new EventEmitter();
  private client: Client | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly log: Logger;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'job-notifications' });
    this.events.setMaxListeners(0);
  }

  onApplicationBootstrap(): void {
    if (listenDatabaseUrl(this.config) === undefined) {
      this.log.info('DATABASE_POOL_MODE=transaction without MIGRATE_DATABASE_URL: no LISTEN through the pooler; job events come from polling');
      return;
    }
    void this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.events.removeAllListeners();
    await this.client?.end().catch(() => undefined);
  }

  /** Calls `listener` with the payload of every notification on `channel`; returns the unsubscribe. */
  on(channel: JobChannel, listener: (payload: string) => void): () => void {
    this.events.on(channel, listener);
    return () => this.events.off(channel, listener);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: listenDatabaseUrl(this.config)!, application_name: 'switchyard-supervisor-listen', connectionTimeoutMillis: 5_000 });
    client.on('notification', (message) => {
      const channel = (Object.keys(JOB_CHANNELS) as JobChannel[]).find((key) => JOB_CHANNELS[key] === message.channel);
      if (channel) this.events.emit(channel, message.payload ?? '');
    });
    client.on('error', (error) => {
      this.log.warn({ err: describeError(error) }, 'LISTEN connection lost; reconnecting (polling covers the gap)');
      this.retry(client);
    });
    client.on('end', () => this.retry(client));
    try {
      await client.connect();
      for (const channel of Object.values(JOB_CHANNELS)) await client.query(`LISTEN ${channel}`);
      this.client = client;
    } catch (error) {
      this.log.warn({ err: describeError(error) }, 'cannot LISTEN for job notifications; retrying (polling covers the gap)');
      this.retry(client);
    }
  }

  private retry(client: Client): void {
    if (this.stopped || (this.client !== undefined && this.client !== client)) return;
    this.client = undefined;
    client.removeAllListeners();
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.timer.unref();
  }
}
