/** What the demo prints: plain text, coloured only on a TTY. */

export interface DemoTask {
  task_id: string;
  agent_id: string;
  role: string;
  status: string;
  current_step: number;
  total_steps: number;
  retry_count: number;
  route_targets: { step: number; target: string; outcome: string; rule: string }[];
  output_summary: { conclusion?: string; confidence?: number | null; document_id?: string } | null;
}

export interface DemoJob {
  job_id: string;
  status: string;
  progress: { completed: number; total: number };
  cost?: { usd: number };
  error?: string;
  result?: {
    synthesis: { conclusion: string; evidence: string[]; confidence: number | null };
    documents: { document_id: string; conclusion: string; confidence: number | null }[];
  };
  tasks: DemoTask[];
}

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  status(s: string): string;
}

export function makeStyle(tty: boolean): Style {
  const wrap = (code: number) => (s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
  const green = wrap(32);
  const red = wrap(31);
  const yellow = wrap(33);
  return {
    bold: wrap(1),
    dim: wrap(2),
    status: (s) => (s === 'success' ? green(s) : s === 'failed' || s === 'cancelled' ? red(s) : yellow(s)),
  };
}

export function progressBar(completed: number, total: number, width = 24): string {
  const filled = total === 0 ? 0 : Math.round((completed / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${completed}/${total}`;
}

const shorten = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** A job's task tree: one line per task with status, steps and where each model call went. */
export function renderJob(label: string, job: DemoJob, style: Style): string {
  const lines: string[] = [];
  lines.push(`${style.bold(label)}  ${style.dim(job.job_id)}`);
  lines.push(`  status ${style.status(job.status)}   tasks ${job.progress.completed}/${job.progress.total}   cost $${(job.cost?.usd ?? 0).toFixed(6)}`);
  if (job.error) lines.push(`  error: ${job.error}`);
  lines.push('  job');
  job.tasks.forEach((task, index) => {
    const branch = index === job.tasks.length - 1 ? '└─' : '├─';
    const route = task.route_targets.map((r) => (r.outcome === 'ok' ? r.target : `${r.target}(${r.outcome})`)).join(' → ') || '-';
    const doc = task.output_summary?.document_id ? ` [${task.output_summary.document_id}]` : '';
    lines.push(
      `  ${branch} ${task.agent_id.padEnd(12)} ${style.status(task.status.padEnd(9))} steps ${task.current_step}/${task.total_steps}  retries ${task.retry_count}  route ${route}${doc}`,
    );
  });
  if (job.result) {
    const s = job.result.synthesis;
    lines.push(`  result (confidence ${s.confidence === null ? 'n/a' : s.confidence.toFixed(2)}):`);
    lines.push(`    ${shorten(s.conclusion, 160)}`);
    for (const doc of job.result.documents) lines.push(style.dim(`    · ${doc.document_id}: ${shorten(doc.conclusion, 120)}`));
  }
  return lines.join('\n');
}
