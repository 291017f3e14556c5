import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { loadConfig } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import type { JobNotifications } from '../notifications/job-notifications';
import type { JobWatches } from '../notifications/job-watches';
import { JobEventsService } from './job-events.service';
import type { JobResponse } from './job.presenter';
import type { JobsService } from './jobs.service';

class FakeResponse extends EventEmitter {
  readonly chunks: string[] = [];
  ended = false;
  writeHead() {
    return this;
  }
  write(chunk: string) {
    this.chunks.push(chunk);
    return true;
  }
  end() {
    this.ended = true;
    this.emit('close');
  }
}

const job = (status: string, step = 0): JobResponse => ({
  job_id: 'j1',
  type: 'doc_review',
  status,
  progress: { completed: 0, total: 1 },
  created_at: 'x',
  updated_at: 'x',
  tasks: [{ task_id: 't1', parent_task_id: 'j1', agent_id: 'a', role: 'extract',
    depends_on: [], status, optional: false, current_step: step, total_steps: 2, retry_count: 0, route_targets: [], output_summary: null, cost_usd: 0, updated_at: 'x' }],
});

function setup(states: JobResponse[]) {
  const listeners = new Set<(payload: string) => void>();
  const notifications = {
    on: (_channel: string, listener: (payload: string) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  } as unknown as JobNotifications;
  let reads = 0;
  const jobs = { get: async () => states[Math.min(reads++, states.length - 1)]! } as unknown as JobsService;
  const config = loadConfig({ EVENTS_POLL_MS: '600000', EVENTS_HEARTBEAT_MS: '600000' });
  const watching = new Map<string, number>();
  const watches = {
    watch: async (jobId: string) => {
      watching.set(jobId, (watching.get(jobId) ?? 0) + 1);
      return () => watching.set(jobId, watching.get(jobId)! - 1);
    },
  } as unknown as JobWatches;
  const service = new JobEventsService(jobs, notifications, watches, config, createLogger('test', 'silent'));
  const response = new FakeResponse();
  const notify = async (jobId: string) => {
    for (const listener of [...listeners]) listener(jobId);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { service, response, listeners, watching, notify, open: () => response as unknown as ServerResponse };
}

describe('JobEventsService', () => {
  it('sends the job at once, again when a notification for it shows a change, and ends with the terminal status', async () => {
    const { service, response, listeners, watching, notify, open } = setup([job('running'), job('running'), job('running', 1), job('success', 2)]);
    await service.stream('tenant', 'j1', open);
    expect(watching.get('j1')).toBe(1);
    await notify('another-job');
    expect(response.chunks).toHaveLength(1);
    await notify('j1');
    await notify('j1');
    expect(response.chunks.map((c) => /^event: (.*)$/m.exec(c)?.[1])).toEqual(['job', 'job', 'end']);
    expect(response.ended).toBe(true);
    expect(listeners.size).toBe(0);
    expect(watching.get('j1')).toBe(0);
  });

  it('stops listening and writing when the client goes away', async () => {
    const { service, response, listeners, watching, notify, open } = setup([job('running'), job('running'), job('running', 1)]);
    await service.stream('tenant', 'j1', open);
    expect(listeners.size).toBe(1);
    response.emit('close');
    expect(listeners.size).toBe(0);
    expect(watching.get('j1')).toBe(0);
    await notify('j1');
    expect(response.chunks).toHaveLength(1);
  });

  it('reads the job again once it is watched: a change before the watch, never notified, is still sent', async () => {
    const { service, response, notify, open } = setup([job('running'), job('running', 1)]);
    await service.stream('tenant', 'j1', open);
    await notify('another-job');
    expect(response.chunks.map((c) => /^event: (.*)$/m.exec(c)?.[1])).toEqual(['job', 'job']);
    response.emit('close');
  });
});
