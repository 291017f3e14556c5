export const CALL_OUTCOMES = ['ok', 'error', 'ratelimit', 'hang', 'garbage', 'wrong'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];
export type CallStatus = number | 'hang' | 'refused';

export interface CallRecord {
  seq: number;
  target: string;
  model: string;
  at: string;
  stream: boolean;
  status: CallStatus;
  outcome: CallOutcome;
  headers: Record<string, string>;
  /** The W3C `traceparent` the caller sent, if any: shows whose trace the call belongs to. */
  traceparent?: string;
  message_chars: number;
  last_user_message_preview: string;
  /** The caller closed the connection before the answer was complete (it gave up, or cancelled a stream). */
  client_gone: boolean;
  /** The request's parameters besides model, messages and stream (stop, seed, tools, response_format, …). */
  params?: Record<string, unknown>;
  /** Chat requests open on this target when this one arrived, itself included: the upstream's own concurrency. */
  concurrent: number;
}

export type NewCall = Omit<CallRecord, 'seq' | 'client_gone' | 'concurrent'> & { concurrent?: number };
export type OutcomeCounts = Record<CallOutcome | 'total', number>;

export const DEFAULT_CALL_LOG_CAPACITY = 50_000;

export interface CallQuery {
  target?: string | undefined;
  sinceSeq?: number | undefined;
}

function emptyCounts(): OutcomeCounts {
  return { ok: 0, error: 0, ratelimit: 0, hang: 0, garbage: 0, wrong: 0, total: 0 };
}

/**
 * Bounded, oldest-dropped log of chat-completion calls. A ring buffer, so appending at
 * capacity costs the same as below it. `seq` keeps increasing across clears, so a poller
 * using `since_seq` never misses or re-reads calls. Counts cover calls since the last
 * clear, including ones the ring has already dropped.
 */
export class CallLog {
  private readonly ring: (CallRecord | undefined)[];
  private head = 0;
  private length = 0;
  private lastSeq = 0;
  private counts = new Map<string, OutcomeCounts>();

  constructor(readonly capacity: number = DEFAULT_CALL_LOG_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.ring = new Array<CallRecord | undefined>(capacity);
  }

  get size(): number {
    return this.length;
  }

  append(call: NewCall): CallRecord {
    this.lastSeq += 1;
    const record: CallRecord = { seq: this.lastSeq, ...call, concurrent: call.concurrent ?? 0, client_gone: false };
    this.ring[(this.head + this.length) % this.capacity] = record;
    if (this.length < this.capacity) this.length += 1;
    else this.head = (this.head + 1) % this.capacity;
    const counts = this.counts.get(call.target) ?? emptyCounts();
    counts[call.outcome] += 1;
    counts.total += 1;
    this.counts.set(call.target, counts);
    return record;
  }

  query({ target, sinceSeq = 0 }: CallQuery = {}): CallRecord[] {
    const out: CallRecord[] = [];
    for (let i = 0; i < this.length; i += 1) {
      const record = this.ring[(this.head + i) % this.capacity];
      if (!record || record.seq <= sinceSeq) continue;
      if (target !== undefined && record.target !== target) continue;
      out.push(record);
    }
    return out;
  }

  countsFor(target: string): OutcomeCounts {
    return { ...(this.counts.get(target) ?? emptyCounts()) };
  }

  /** Returns how many records were dropped. */
  clear(): number {
    const dropped = this.length;
    this.ring.fill(undefined);
    this.head = 0;
    this.length = 0;
    this.counts = new Map();
    return dropped;
  }
}
