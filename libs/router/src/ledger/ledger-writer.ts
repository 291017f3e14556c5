import type { Logger } from '@switchyard/observability';
import type { AttemptEvent, CallObserver } from '../observe/call-observer';
import { toLedgerEntry, type LedgerEntry, type LedgerSource } from './ledger-entry';

/** Where batches go: the ledger repository's insert in the apps, a fake in tests. */
export type LedgerSink = (rows: readonly LedgerEntry[]) => Promise<void>;

export interface LedgerWriterOptions {
  source: LedgerSource;
  sink: LedgerSink;
  logger: Logger;
  /** A buffered row waits at most this long before a write is attempted. */
  flushIntervalMs?: number;
  /** This many buffered rows trigger a write at once. */
  flushRows?: number;
  /** Rows per sink call. */
  maxBatchRows?: number;
  /** Past this many buffered rows (a long database outage) the oldest are dropped, and counted. */
  maxBufferedRows?: number;
  /** Backoff after a failed write: base × 2^(failures−1), capped, ±20 % jitter. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Drop warnings are logged at most this often. */
  dropWarningIntervalMs?: number;
  now?: () => number;
  random?: () => number;
}

export interface LedgerWriterStats {
  buffered: number;
  written: number;
  dropped: number;
  /** Rows the database refused for their data (isolated by splitting their batch) and left out. */
  quarantined: number;
  failedWrites: number;
}

const DEFAULTS = {
  flushIntervalMs: 1_000,
  flushRows: 200,
  maxBatchRows: 1_000,
  maxBufferedRows: 20_000,
  retryBaseMs: 1_000,
  retryMaxMs: 30_000,
  dropWarningIntervalMs: 10_000,
};

/**
 * Whether a failed write was refused for the rows it carried (Postgres SQLSTATE class 22
 * "data exception" or 23 "integrity constraint violation"), rather than for the database
 * being unreachable: only then does splitting the batch help. Pure.
 */
export function isLedgerDataError(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

/** The delay before the next write after `failures` consecutive failed writes. Pure. */
export function ledgerRetryDelayMs(failures: number, baseMs: number, maxMs: number, random: number): number {
  const raw = Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(raw * (0.8 + 0.4 * random));
}

/**
 * The cost ledger's writer: a call observer that turns each upstream attempt into a row,
 * buffers rows in memory and writes them in batches off the hot path — every
 * `flushIntervalMs`, or at once when `flushRows` are waiting. A failed write keeps its rows
 * and is retried with backoff; the buffer is bounded, so a long outage drops the oldest
 * rows (counted and warned about) instead of growing without end. A batch the database
 * refuses for its data is split in halves until the offending rows stand alone; those are
 * quarantined (dropped, logged without their content, counted) and every other row is
 * written, so one poison row never blocks the ledger. Never throws into the router. `close()` writes what is left, for shutdown.
 */
export class LedgerWriter implements CallObserver {
  private readonly options: Required<Omit<LedgerWriterOptions, 'logger' | 'sink' | 'source'>>;
  private readonly sink: LedgerSink;
  private readonly source: LedgerSource;
  private readonly logger: Logger;
  private buffer: LedgerEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private forceAll = false;
  private failures = 0;
  private retryAt = 0;
  private closed = false;
  private readonly counts = { written: 0, dropped: 0, quarantined: 0, failedWrites: 0 };
  private droppedSinceWarning = 0;
  private lastDropWarning = Number.NEGATIVE_INFINITY;
  private dropReason = '';

  constructor(options: LedgerWriterOptions) {
    this.sink = options.sink;
    this.source = options.source;
    this.logger = options.logger;
    this.options = {
      flushIntervalMs: options.flushIntervalMs ?? DEFAULTS.flushIntervalMs,
      flushRows: options.flushRows ?? DEFAULTS.flushRows,
      maxBatchRows: options.maxBatchRows ?? DEFAULTS.maxBatchRows,
      maxBufferedRows: options.maxBufferedRows ?? DEFAULTS.maxBufferedRows,
      retryBaseMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
      retryMaxMs: options.retryMaxMs ?? DEFAULTS.retryMaxMs,
      dropWarningIntervalMs: options.dropWarningIntervalMs ?? DEFAULTS.dropWarningIntervalMs,
      now: options.now ?? Date.now,
      random: options.random ?? Math.random,
    };
  }

  onAttempt(event: AttemptEvent): void {
    try {
      if (this.closed) {
        this.drop(1, 'the ledger writer is closed');
        return;
      }
      this.buffer.push(toLedgerEntry(event, this.source));
      if (this.buffer.length > this.options.maxBufferedRows) {
        this.buffer.shift();
        this.drop(1, 'the ledger buffer is full');
      }
      if (this.buffer.length >= this.options.flushRows && !this.running && this.options.now() >= this.retryAt) {
        this.clearTimer();
        void this.run(false);
      } else {
        this.arm(this.options.flushIntervalMs);
      }
    } catch (error) {
      // Never into the router's call path; a row that cannot even be built is lost, and said so.
      this.logger.error({ err: error, target: event?.target?.name }, 'ledger: could not record an upstream attempt');
    }
  }

  stats(): LedgerWriterStats {
    return { buffered: this.buffer.length, ...this.counts };
  }

  /** Writes everything buffered now, ignoring any backoff. Resolves (never rejects) when done or after a failed write. */
  async flush(): Promise<void> {
    this.clearTimer();
    this.forceAll = true;
    await (this.running ?? this.run(true));
  }

  /** Writes what is left and stops; rows recorded afterwards are dropped and counted. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    this.clearTimer();
    if (this.buffer.length > 0) {
      const lost = this.buffer.length;
      this.buffer = [];
      this.drop(lost, 'the ledger could not be written before shutdown');
    }
    this.warnDropped(true);
  }

  /** One write loop at a time: `flush()` joins the running one and makes it write everything. */
  private run(all: boolean): Promise<void> {
    if (!this.running) {
      this.running = this.pump(all)
        .catch((error: unknown) => this.logger.error({ err: error }, 'ledger: write loop failed'))
        .finally(() => {
          this.running = undefined;
          this.armForRemainder();
        });
    }
    return this.running;
  }

  /**
   * Writes batches until the buffer is empty (or, unless forced, holds fewer than
   * `flushRows`) or a write fails.
   */
  private async pump(all: boolean): Promise<void> {
    while (this.buffer.length > 0) {
      if (!all && !this.forceAll && this.buffer.length < this.options.flushRows) break;
      if (!(await this.writeBatch())) break;
    }
    this.forceAll = false;
  }

  /** What a write loop left behind waits for the next interval, or for the backoff after a failure. */
  private armForRemainder(): void {
    if (this.buffer.length === 0) return;
    this.arm(this.failures > 0 ? Math.max(0, this.retryAt - this.options.now()) : this.options.flushIntervalMs);
  }

  private async writeBatch(): Promise<boolean> {
    const batch = this.buffer.splice(0, this.options.maxBatchRows);
    const outcome = await this.writeIsolatingPoison(batch);
    if (outcome.failed) {
      // Back to the front, in order; rows recorded meanwhile stay behind them.
      this.buffer = outcome.unwritten.concat(this.buffer);
      const overflow = this.buffer.length - this.options.maxBufferedRows;
      if (overflow > 0) {
        this.buffer.splice(0, overflow);
        this.drop(overflow, 'the ledger buffer is full');
      }
      this.counts.failedWrites += 1;
      this.failures += 1;
      const delay = ledgerRetryDelayMs(this.failures, this.options.retryBaseMs, this.options.retryMaxMs, this.options.random());
      this.retryAt = this.options.now() + delay;
      this.logger.warn(
        { err: outcome.error, rows: outcome.unwritten.length, buffered: this.buffer.length, failures: this.failures, retry_in_ms: delay },
        'ledger: write failed; will retry',
      );
      return false;
    }
    if (this.failures > 0) this.logger.info({ failures: this.failures, rows: batch.length }, 'ledger: writes resumed');
    this.failures = 0;
    this.retryAt = 0;
    return true;
  }

  /**
   * Writes `rows`; when the database refuses them for their data, writes each half on its
   * own, down to single rows, and quarantines a single row that is still refused. An outage
   * (any other error) stops there and hands back every row not yet written, in order.
   */
  private async writeIsolatingPoison(rows: LedgerEntry[]): Promise<{ failed: false } | { failed: true; unwritten: LedgerEntry[]; error: unknown }> {
    try {
      await this.sink(rows);
      this.counts.written += rows.length;
      return { failed: false };
    } catch (error) {
      if (!isLedgerDataError(error)) return { failed: true, unwritten: rows, error };
      const [row] = rows;
      if (rows.length === 1 && row) {
        this.quarantine(row, error);
        return { failed: false };
      }
      const middle = Math.ceil(rows.length / 2);
      const first = await this.writeIsolatingPoison(rows.slice(0, middle));
      if (first.failed) return { ...first, unwritten: first.unwritten.concat(rows.slice(middle)) };
      return this.writeIsolatingPoison(rows.slice(middle));
    }
  }

  /** The row's content may be what the database refused (and may be a tenant's data): only where it came from is logged. */
  private quarantine(row: LedgerEntry, error: unknown): void {
    this.counts.quarantined += 1;
    this.logger.warn(
      {
        sqlstate: (error as { code?: unknown }).code,
        source: row.source,
        target: row.target,
        trace_id: row.traceId,
        job_id: row.jobId,
        quarantined_total: this.counts.quarantined,
      },
      'ledger: the database refused a row for its data; left out of the ledger',
    );
  }

  private arm(delayMs: number): void {
    if (this.timer || this.running || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run(true);
    }, delayMs);
    // A pending ledger write never holds the process open; shutdown calls close().
    this.timer.unref?.();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private drop(rows: number, reason: string): void {
    this.counts.dropped += rows;
    this.droppedSinceWarning += rows;
    this.dropReason = reason;
    this.warnDropped(false);
  }

  private warnDropped(force: boolean): void {
    const now = this.options.now();
    if (this.droppedSinceWarning === 0) return;
    if (!force && now - this.lastDropWarning < this.options.dropWarningIntervalMs) return;
    this.logger.warn({ dropped: this.droppedSinceWarning, dropped_total: this.counts.dropped, reason: this.dropReason }, 'ledger: rows dropped');
    this.droppedSinceWarning = 0;
    this.lastDropWarning = now;
  }
}
