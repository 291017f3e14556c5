import { decideJobEvent, formatSseEvent } from './job-events';
import type { JobResponse, TaskResponse } from './job.presenter';

const task = (status: string, step: number): TaskResponse => ({
  task_id: 't1',
  parent_task_id: 'j',
  agent_id: 'extract-1',
  role: 'extract',
    depends_on: [],
  status,
  optional: false,
  current_step: step,
  total_steps: 2,
  retry_count: 0,
  route_targets: [],
  output_summary: null,
  cost_usd: 0,
  updated_at: '2026-01-01T00:00:00.000Z',
});
const job = (status: string, tasks: TaskResponse[], extra: Partial<JobResponse> = {}): JobResponse => ({
  job_id: 'j',
  type: 'doc_review',
  status,
  progress: { completed: tasks.filter((t) => t.status === 'success').length, total: tasks.length },
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  tasks,
  ...extra,
});

describe('decideJobEvent', () => {
  it('emits the first view, then only on a change of status, queue place, progress or a task status or step', () => {
    const first = decideJobEvent(undefined, job('queued', [task('queued', 0)], { queue_position: 2 }));
    expect(first).toMatchObject({ emit: true, event: 'job' });
    const key = (first as { key: string }).key;
    expect(decideJobEvent(key, job('queued', [task('queued', 0)], { queue_position: 2, updated_at: 'later' }))).toEqual({ emit: false });
    expect(decideJobEvent(key, job('queued', [task('queued', 0)], { queue_position: 1 }))).toMatchObject({ emit: true, event: 'job' });
    expect(decideJobEvent(key, job('running', [task('running', 0)]))).toMatchObject({ emit: true, event: 'job' });
    const running = (decideJobEvent(key, job('running', [task('running', 0)])) as { key: string }).key;
    expect(decideJobEvent(running, job('running', [task('running', 1)]))).toMatchObject({ emit: true, event: 'job' });
  });

  it('ends with the terminal status, even when nothing else changed', () => {
    for (const status of ['success', 'failed', 'cancelled']) {
      expect(decideJobEvent(undefined, job(status, []))).toMatchObject({ emit: true, event: 'end' });
    }
  });
});

describe('formatSseEvent', () => {
  it('writes id, event and one line of JSON data, then a blank line', () => {
    expect(formatSseEvent('end', 3, { status: 'success', text: 'a\nb' })).toBe('id: 3\nevent: end\ndata: {"status":"success","text":"a\\nb"}\n\n');
  });
});
