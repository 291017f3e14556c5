import { readFileSync } from 'node:fs';
import { generateWorkload } from './generate-workload';
import { WORKLOAD_FILE, loadWorkload, repeatedBodies, waves, type WorkloadLine } from './workload';

function line(id: number, content: string, burst?: number): WorkloadLine {
  return {
    id,
    task: 'chat',
    lang: 'en',
    sensitive: false,
    ...(burst === undefined ? {} : { burst }),
    body: { model: 'auto', messages: [{ role: 'user', content }], temperature: 0, max_tokens: 16, metadata: {} },
  };
}

describe('economics workload', () => {
  it('groups consecutive lines of one burst into one wave, every other line alone', () => {
    const lines = [line(1, 'a'), line(2, 'b', 1), line(3, 'b', 1), line(4, 'c'), line(5, 'b', 2), line(6, 'b', 2), line(7, 'b', 2)];
    expect(waves(lines).map((wave) => wave.map((l) => l.id))).toEqual([[1], [2, 3], [4], [5, 6, 7]]);
  });

  it('counts a request as repeated when its whole body was sent before', () => {
    expect(repeatedBodies([line(1, 'a'), line(2, 'b'), line(3, 'a'), line(4, 'a'), line(5, 'c')])).toBe(2);
  });

  it('ships the fixture its generator writes, with the mix the bench promises', () => {
    const shipped = loadWorkload();
    expect(`${generateWorkload().map((l) => JSON.stringify(l)).join('\n')}\n`).toBe(readFileSync(WORKLOAD_FILE, 'utf8'));
    const count = (f: (l: WorkloadLine) => boolean) => shipped.filter(f).length;
    expect(shipped.length).toBeGreaterThanOrEqual(1000);
    expect(count((l) => l.repeat_of !== undefined) / shipped.length).toBeGreaterThanOrEqual(0.3);
    expect(count((l) => l.sensitive) / shipped.length).toBeGreaterThan(0.17);
    expect(count((l) => l.sensitive) / shipped.length).toBeLessThan(0.23);
    expect(shipped.filter((l) => l.sensitive).every((l) => l.body.metadata.sensitivity === 'sensitive')).toBe(true);
    expect(new Set(shipped.map((l) => l.task))).toEqual(new Set(['classify', 'extract', 'summarize', 'code', 'reasoning', 'chat']));
    expect(count((l) => l.lang === 'zh')).toBeGreaterThan(300);
    expect(count((l) => l.lang === 'en')).toBeGreaterThan(300);
    expect(count((l) => l.body.metadata.task_type === undefined)).toBeGreaterThan(50);
    expect(count((l) => l.burst !== undefined)).toBeGreaterThan(50);
    // A repeat is word for word its original.
    const byId = new Map(shipped.map((l) => [l.id, l]));
    expect(shipped.filter((l) => l.repeat_of !== undefined).every((l) => JSON.stringify(l.body) === JSON.stringify(byId.get(l.repeat_of!)?.body))).toBe(true);
  });
});
