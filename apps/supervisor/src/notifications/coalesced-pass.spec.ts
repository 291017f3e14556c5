import { CoalescedPass } from './coalesced-pass';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('CoalescedPass', () => {
  it('runs one pass at a time and folds the requests made meanwhile into one more pass', async () => {
    const gates = [deferred(), deferred()];
    let calls = 0;
    const pass = new CoalescedPass(() => gates[calls++]!.promise, 60_000, () => undefined);
    const first = pass.request();
    const second = pass.request();
    const third = pass.request();
    expect(calls).toBe(1);
    gates[0]!.resolve();
    await first;
    expect(calls).toBe(2);
    gates[1]!.resolve();
    await Promise.all([second, third]);
    expect(calls).toBe(2);
  });

  it('reports a failing pass and runs the next request', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const pass = new CoalescedPass(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('db away');
      },
      60_000,
      (error) => errors.push(error),
    );
    await pass.request();
    await pass.request();
    expect(calls).toBe(2);
    expect(errors).toEqual([new Error('db away')]);
  });
});
