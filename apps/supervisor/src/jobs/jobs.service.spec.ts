import { loadConfig } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { WorkflowCatalog, type QueuedTask, type TaskQueues } from '@switchyard/orchestration';
import type { AdmissionRepository, JobRepository, TenantBudgetRepository, WebhookOutboxRepository } from '@switchyard/state';
import type { AdmissionService } from '../admission/admission.service';
import { JobsService } from './jobs.service';

const catalog = new WorkflowCatalog({ dir: 'config/workflows', logger: createLogger('test', 'silent') });
const body = { type: 'doc_review', input: { question: 'q?', documents: [{ id: 'd1', text: 'text' }] } };

/** Submit with the storage and the queue replaced: what it writes, what it enqueues, what it answers. */
function setup(options: { admitted: (jobId: string) => string[]; admittedAtInsert?: boolean; statusAfterPass?: string; env?: Record<string, string> }) {
  const created: Array<{ status?: string }> = [];
  const flows: unknown[] = [];
  const passes: string[][] = [];
  const inserts: string[] = [];
  const tasks = {
    createJob: async (root: { taskId: string; status?: string }, rows: Array<{ status?: string }>) => {
      inserts.push('queued');
      created.push(root, ...rows);
      return { created: true, jobId: root.taskId };
    },
    createJobAdmitting: async (root: { taskId: string }, _rows: unknown[], limits: { tenant: number; global: number }) => {
      inserts.push(`admitting ${limits.tenant}/${limits.global}`);
      return { created: true, jobId: root.taskId, admitted: options.admittedAtInsert ?? false };
    },
  } as unknown as JobRepository;
  let jobId = '';
  const admission = {
    limitsFor: () => ({ tenant: 2, global: 50 }),
    admitNow: async (startedByCaller: string[]) => {
      passes.push(startedByCaller);
      jobId = startedByCaller[0]!;
      return options.admitted(jobId);
    },
  } as unknown as AdmissionService;
  const admissions = { jobStatus: async () => options.statusAfterPass ?? 'queued' } as unknown as AdmissionRepository;
  const callbacks: string[] = [];
  const webhooks = { setCallback: async (_t: string, _j: string, url: string) => void callbacks.push(url) } as unknown as WebhookOutboxRepository;
  const queues = { enqueue: async (ready: QueuedTask[]) => void flows.push(ready) } as unknown as TaskQueues;
  const service = new JobsService(tasks, catalog, admission, admissions, webhooks, {} as TenantBudgetRepository, queues, loadConfig(options.env ?? {}), createLogger('test', 'silent'));
  return { service, created, flows, callbacks, passes, inserts };
}

describe('JobsService.submit', () => {
  it('writes the job admitted when its insert says nothing waits and the limits allow, and enqueues its ready tasks without a pass', async () => {
    const { service, flows, passes, inserts } = setup({ admitted: () => [], admittedAtInsert: true });
    expect((await service.submit('t', body, undefined)).status).toBe('pending');
    expect(inserts).toEqual(['admitting 2/50']);
    expect(passes).toEqual([]);
    expect(flows).toHaveLength(1);
  });

  it('runs a pass for a job its insert left queued, and enqueues its ready tasks once this submission admitted it', async () => {
    const { service, flows, passes } = setup({ admitted: (id) => [id] });
    expect((await service.submit('t', body, undefined)).status).toBe('pending');
    expect(passes).toHaveLength(1);
    expect(flows).toHaveLength(1);
  });

  it('answers queued and enqueues nothing when the job is not admitted', async () => {
    const { service, flows } = setup({ admitted: () => [] });
    expect((await service.submit('t', body, undefined)).status).toBe('queued');
    expect(flows).toHaveLength(0);
  });

  it('answers the real status when a concurrent pass admitted (and started) the job first', async () => {
    const { service, flows } = setup({ admitted: () => [], statusAfterPass: 'pending' });
    expect((await service.submit('t', body, undefined)).status).toBe('pending');
    // The pass that admitted it started it; enqueueing here as well would be a second start.
    expect(flows).toHaveLength(0);
  });

  it('refuses a callback_url without WEBHOOK_SECRET, and stores an allowed one', async () => {
    const off = setup({ admitted: (id) => [id] });
    await expect(off.service.submit('t', { ...body, callback_url: 'http://127.0.0.1:9/x' }, undefined)).rejects.toMatchObject({
      issues: [{ path: 'callback_url', message: expect.stringContaining('WEBHOOK_SECRET') }],
    });
    const on = setup({ admitted: (id) => [id], env: { WEBHOOK_SECRET: 'a-secret-of-16-chars', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
    await on.service.submit('t', { ...body, callback_url: 'http://127.0.0.1:9/x' }, undefined);
    expect(on.callbacks).toEqual(['http://127.0.0.1:9/x']);
    // Queued until its callback is stored: never admitted by its own insert.
    expect(on.inserts).toEqual(['queued']);
    expect(on.created.every((row) => row.status === 'queued')).toBe(true);
    await expect(on.service.submit('t', { ...body, callback_url: 'http://10.1.2.3/x' }, undefined)).rejects.toMatchObject({
      issues: [{ path: 'callback_url', message: expect.stringContaining('10.1.2.3') }],
    });
  });
});
