import { loadConfig } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import type { JobWatchRepository } from '@switchyard/state';
import { JOB_WATCH_TTL_MS, JobWatches } from './job-watches';

function setup(env: Record<string, string> = {}, failing = false) {
  const calls: string[] = [];
  const repository = {
    renew: async (_watcher: string, jobIds: readonly string[], ttlMs: number) => {
      calls.push(`renew ${jobIds.join(',')} ${ttlMs}`);
      if (failing) throw new Error('connection refused');
    },
    release: async (_watcher: string, jobId: string) => {
      calls.push(`release ${jobId}`);
    },
  } as unknown as JobWatchRepository;
  const watches = new JobWatches(repository, loadConfig(env), createLogger('test', 'silent'));
  return { watches, calls };
}

describe('JobWatches', () => {
  afterEach(() => jest.useRealTimers());

  it('writes one row per job however many streams watch it, and releases it with the last stream', async () => {
    const { watches, calls } = setup();
    const first = await watches.watch('j1');
    const second = await watches.watch('j1');
    expect(calls).toEqual([`renew j1 ${JOB_WATCH_TTL_MS}`]);
    first();
    first();
    expect(calls).toEqual([`renew j1 ${JOB_WATCH_TTL_MS}`]);
    second();
    expect(calls).toEqual([`renew j1 ${JOB_WATCH_TTL_MS}`, 'release j1']);
    expect(watches.watched().size).toBe(0);
  });

  it('renews every watched job in one write while any is watched, and stops when none is', async () => {
    jest.useFakeTimers();
    const { watches, calls } = setup();
    const a = await watches.watch('a');
    const b = await watches.watch('b');
    calls.length = 0;
    await jest.advanceTimersByTimeAsync(JOB_WATCH_TTL_MS / 3);
    expect(calls).toEqual([`renew a,b ${JOB_WATCH_TTL_MS}`]);
    a();
    b();
    calls.length = 0;
    await jest.advanceTimersByTimeAsync(JOB_WATCH_TTL_MS);
    expect(calls).toEqual([]);
    watches.onApplicationShutdown();
  });

  it('a failed write does not fail the stream: the watch is kept and renewed later', async () => {
    const { watches, calls } = setup({}, true);
    const release = await watches.watch('j1');
    expect(calls).toEqual([`renew j1 ${JOB_WATCH_TTL_MS}`]);
    expect(watches.watched().get('j1')).toBe(1);
    release();
  });

  it('writes nothing without a LISTEN connection (transaction pooler, no direct URL): nobody would hear the notifications', async () => {
    const { watches, calls } = setup({ DATABASE_POOL_MODE: 'transaction' });
    const release = await watches.watch('j1');
    release();
    expect(calls).toEqual([]);
  });
});
