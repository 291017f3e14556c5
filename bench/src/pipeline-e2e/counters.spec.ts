import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfTimeByPackage } from '../support/cpu-profile';
import { JobEnds } from './flows';
import { cpuBetween, type CpuCounters } from './process-cpu';

describe('cpuBetween', () => {
  const reading = (processes: [string, number][], backends: [number, string, number][], redis: number): CpuCounters => ({
    processes: new Map(processes),
    backends: backends.map(([pid, group, seconds]) => ({ pid, group, seconds })),
    redis,
  });

  it('takes each process and Redis as differences, and groups Postgres backends by owner', () => {
    const before = reading([['worker-1', 10], ['supervisor', 4]], [[101, 'postgres (worker-1)', 2], [102, 'postgres (worker-1)', 1]], 50);
    const after = reading([['worker-1', 12.5], ['supervisor', 4.5]], [[101, 'postgres (worker-1)', 3], [102, 'postgres (worker-1)', 1.5], [103, 'postgres (supervisor)', 0.25]], 51);
    const spent = cpuBetween(before, after);
    expect(spent.get('worker-1')).toBeCloseTo(2.5);
    expect(spent.get('supervisor')).toBeCloseTo(0.5);
    expect(spent.get('postgres (worker-1)')).toBeCloseTo(1.5);
    // A backend born in the interval counts from zero.
    expect(spent.get('postgres (supervisor)')).toBeCloseTo(0.25);
    expect(spent.get('redis (server-wide)')).toBeCloseTo(1);
  });
});

describe('selfTimeByPackage after an idle gap', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sy-profile-spec-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('leaves out everything before the first idle stretch of the given length', () => {
    const file = join(dir, 'worker.cpuprofile');
    const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url } });
    writeFileSync(
      file,
      JSON.stringify({
        nodes: [frame(1, '(idle)', ''), frame(2, 'boot', '/repo/node_modules/@nestjs/core/x.js'), frame(3, 'query', '/repo/node_modules/pg/lib/client.js'), frame(4, 'claim', '/repo/libs/state/dist/a.js')],
        // Start-up (1 s of Nest), a short pause, 2.5 s idle, then the work.
        samples: [2, 2, 1, 2, 1, 1, 1, 3, 4, 4],
        timeDeltas: [0, 500_000, 500_000, 100_000, 100_000, 1_000_000, 1_000_000, 500_000, 1_000, 2_000, 3_000],
      }),
    );
    expect(selfTimeByPackage([file], { afterIdleGapMs: 2_000 }).map((t) => [t.key, t.ms])).toEqual([
      ['@switchyard/state', 5],
      ['pg', 1],
    ]);
    expect(selfTimeByPackage([file]).map((t) => t.key)).toContain('@nestjs/core');
  });
});

describe('JobEnds', () => {
  it('resolves a wait whether the end came before or after it, and rejects a failed job', async () => {
    const ends = new JobEnds();
    ends.settle('early');
    await expect(ends.wait('early', 1_000)).resolves.toBeUndefined();
    const late = ends.wait('late', 1_000);
    ends.settle('late');
    await expect(late).resolves.toBeUndefined();
    const failed = ends.wait('failed', 1_000);
    ends.settle('failed', new Error('flow failed'));
    await expect(failed).rejects.toThrow('flow failed');
  });

  it('rejects a wait that outlasts its timeout', async () => {
    await expect(new JobEnds().wait('never', 10)).rejects.toThrow('did not end within 10 ms');
  });
});
