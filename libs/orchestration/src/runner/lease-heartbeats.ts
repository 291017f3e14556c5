import type { Logger } from '@switchyard/observability';
import type { Lease } from '@switchyard/state';
import { describeError } from './failure';

/** Where heartbeats are written: every lease given in one statement; the task ids whose lease is still held come back. */
export interface HeartbeatStore {
  heartbeatMany(leases: readonly Lease[]): Promise<Set<string>>;
}

interface Watched {
  lease: Lease;
  onLost: () => void;
}

/**
 * One heartbeat per worker, not one per task: every `intervalMs` the leases of all the tasks
 * this worker runs are heartbeaten in one statement. A worker running 100 tasks in long model
 * calls writes one statement per interval instead of 100. A lease that is no longer held (taken
 * over, cancelled) is told once through its `onLost`; a failed write is logged and is not a lost
 * lease (the next interval may land, well inside the stale threshold). A beat still in flight
 * when the next is due skips that one rather than piling statements up behind a slow database.
 * The timer runs only while a lease is watched.
 */
export class LeaseHeartbeats {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private beating = false;

  constructor(
    private readonly store: HeartbeatStore,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Heartbeats `lease` from the next interval on until the returned function is called. */
  watch(lease: Lease, onLost: () => void): () => void {
    const entry: Watched = { lease, onLost };
    this.watched.set(lease.taskId, entry);
    this.timer ??= setInterval(() => void this.beat(), this.intervalMs).unref();
    return () => {
      if (this.watched.get(lease.taskId) === entry) this.watched.delete(lease.taskId);
      if (this.watched.size === 0 && this.timer !== undefined) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** One beat now (the timer's tick). */
  async beat(): Promise<void> {
    if (this.beating || this.watched.size === 0) return;
    this.beating = true;
    const entries = [...this.watched.values()];
    try {
      const held = await this.store.heartbeatMany(entries.map((entry) => entry.lease));
      for (const entry of entries) {
        // A task that finished (and stopped being watched) while the beat was in flight lost nothing.
        if (!held.has(entry.lease.taskId) && this.watched.get(entry.lease.taskId) === entry) {
          this.watched.delete(entry.lease.taskId);
          entry.onLost();
        }
      }
    } catch (error) {
      this.logger.warn({ err: describeError(error), leases: entries.length }, 'heartbeat write failed');
    } finally {
      this.beating = false;
    }
  }
}
