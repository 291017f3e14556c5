/** The parts of the admin API's answers the dashboard reads (see /openapi.json for all of it). */

export interface JobListItem {
  job_id: string;
  tenant_id: string;
  type: string;
  status: string;
  progress: { completed: number; total: number };
  cost?: { usd: number };
  error?: { code: string; message: string };
  created_at: string;
  updated_at: string;
}

export interface Attempt {
  step: number | null;
  at: string;
  target: string;
  target_type: string;
  model: string;
  rule: string;
  outcome: string;
  error_class: string | null;
  latency_ms: number;
  cost_usd: number;
  trace_id: string | null;
}

export interface JobTask {
  task_id: string;
  parent_task_id: string | null;
  agent_id: string;
  role: string;
  status: string;
  optional: boolean;
  depends_on?: string[];
  current_step: number;
  total_steps: number;
  retry_count: number;
  route_targets: Array<{ step: number; target: string; model: string; rule: string; outcome: string; latency_ms: number; error?: string }>;
  error?: { code: string; message: string };
  cost_usd: number;
  steps: Array<{ step: number; name: string; completed_at: string }>;
  attempts: Attempt[];
  duration_ms: number | null;
}

export interface AdminJob extends JobListItem {
  trace_ids: string[];
  duration_ms: number | null;
  result?: unknown;
  tasks: JobTask[];
}

export interface Target {
  name: string;
  type: 'local' | 'cloud';
  model: string;
  state: string;
  breaker: string;
  score: number;
  share: number;
  inFlight: number;
  maxConcurrency: number;
  latencyMs: { p50: number | null; p95: number | null };
  errorRate: number;
  requests: number;
  drained: boolean;
  forcedPrimary: boolean;
  /** Every process's view (null when Redis did not answer). */
  fleet: { aggregate: { totalInFlight: number; anyBreakerOpen: boolean } } | null;
}

/** One group of GET /admin/costs: the ledger's attempts of every process. */
export interface LedgerGroup {
  key: string | null;
  calls: number;
  errors: number;
  cost_usd: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
}

export interface QueueCounts {
  queue: string;
  counts: Record<string, number>;
}
