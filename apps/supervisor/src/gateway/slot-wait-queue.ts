import type { RoutingExplanation } from '@switchyard/router';
import { FLEET_DROP_REASONS, LIVE_DROP_REASONS } from '@switchyard/router';

/** What the queue needs of time: the current time and a cancellable timer. */
export interface QueueTimers {
  now(): number;
  schedule(ms: number, run: () => void): () => void;
}

export const realTimers: QueueTimers = {
  now: () => performance.now(),
  schedule: (ms, run) => {
    const timer = setTimeout(run, ms);
    return () => clearTimeout(timer);
  },
};

export interface QueueLimits {
  capacity: number;
  timeoutMs: number;
}

/** A call's place in line (first come, first served) and the end of its wait. */
export interface QueueTicket {
  readonly number: number;
  readonly deadline: number;
}

export class QueueFullError extends Error {
  constructor(readonly capacity: number) {
    super(`the gateway's request queue is full (${capacity} calls waiting for a model slot)`);
    this.name = 'QueueFullError';
  }
}

export class QueueTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no model target had a free slot within the gateway's queue wait of ${timeoutMs} ms`);
    this.name = 'QueueTimeoutError';
  }
}

interface Waiter {
  ticket: QueueTicket;
  wake: () => void;
  fail: (error: unknown) => void;
}

/** Reasons a target is skipped that a finished call can clear (a slot frees up). */
const CAPACITY_REASONS: ReadonlySet<string> = new Set([LIVE_DROP_REASONS.concurrency, LIVE_DROP_REASONS.overloaded, FLEET_DROP_REASONS.concurrency]);

/**
 * Whether waiting for a slot can help a call no target would take: some candidate was only
 * full. When every candidate is down, drained or forbidden (sensitive data and no local
 * target), waiting would only delay the 503.
 */
export function waitingForSlotCanHelp(explanation: RoutingExplanation): boolean {
  return explanation.candidates.some((candidate) => candidate.reason !== undefined && CAPACITY_REASONS.has(candidate.reason));
}

/**
 * The calls waiting for a model slot, in arrival order. A freed slot wakes the first in line;
 * a woken call that cannot use it passes the turn to the next one behind it and keeps its own
 * place. A call waits at most `timeoutMs` in all, and at most `capacity` calls wait.
 */
export class SlotWaitQueue {
  private readonly waiters: Waiter[] = [];
  /** Tickets admitted and not yet done: waiting, or woken and trying for a slot. */
  private readonly holders = new Set<number>();
  private nextNumber = 0;

  constructor(
    private readonly limits: () => QueueLimits,
    private readonly timers: QueueTimers = realTimers,
  ) {}

  /** Calls in line: waiting, or woken and trying. While there are any, a new call joins the line instead of going first. */
  get inLine(): number {
    return this.holders.size;
  }

  /** A ticket for a call about to wait; QueueFullError when the line is at capacity. */
  admit(): QueueTicket {
    const { capacity, timeoutMs } = this.limits();
    if (this.holders.size >= capacity) throw new QueueFullError(capacity);
    const ticket = { number: this.nextNumber++, deadline: this.timers.now() + timeoutMs };
    this.holders.add(ticket.number);
    return ticket;
  }

  /** The ticket's call got its slot or gave up: it is out of line. */
  leave(ticket: QueueTicket): void {
    this.holders.delete(ticket.number);
  }

  /**
   * Resolves when a slot may be free for this ticket; rejects with QueueTimeoutError at the
   * ticket's deadline, or with the signal's reason when the caller goes away.
   */
  wait(ticket: QueueTicket, signal?: AbortSignal): Promise<void> {
    const remainingMs = ticket.deadline - this.timers.now();
    if (remainingMs <= 0) return Promise.reject(new QueueTimeoutError(this.limits().timeoutMs));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        cancelTimer();
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        ticket,
        wake: () => {
          leave();
          resolve();
        },
        fail: (error) => {
          leave();
          this.remove(waiter);
          reject(error);
        },
      };
      const onAbort = () => waiter.fail(signal?.reason);
      const cancelTimer = this.timers.schedule(remainingMs, () => waiter.fail(new QueueTimeoutError(this.limits().timeoutMs)));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.insert(waiter);
    });
  }

  /** A slot was freed: the first in line tries. */
  slotFreed(): void {
    this.waiters.shift()?.wake();
  }

  /** The holder of `ticket` was woken but did not take a slot (or left): the next in line behind it tries. */
  passOn(ticket: QueueTicket): void {
    const index = this.waiters.findIndex((waiter) => waiter.ticket.number > ticket.number);
    if (index >= 0) this.waiters.splice(index, 1)[0]!.wake();
  }

  private insert(waiter: Waiter): void {
    // Kept in ticket order: a call that goes back to waiting keeps its place ahead of later arrivals.
    let index = this.waiters.length;
    while (index > 0 && this.waiters[index - 1]!.ticket.number > waiter.ticket.number) index -= 1;
    this.waiters.splice(index, 0, waiter);
  }

  private remove(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter);
    if (index >= 0) this.waiters.splice(index, 1);
  }
}
