import { CLOUD, LOCAL, type RunningSim, startSim } from '../test/sim-harness';

interface Call {
  target: string;
  concurrent: number;
}
interface Snapshot {
  name: string;
  in_flight: number;
  peak_concurrency: number;
}

describe('llm-sim concurrency count', () => {
  let running: RunningSim;
  beforeEach(async () => {
    running = await startSim([{ ...LOCAL, latencyMs: 200 }, CLOUD]);
  });
  afterEach(() => running.sim.stop());

  it('records how many requests were open on the target at each arrival, and the peak', async () => {
    const client = running.client(LOCAL.name);
    await Promise.all(Array.from({ length: 4 }, () => client.chat.completions.create({ model: LOCAL.model, messages: [{ role: 'user', content: 'hi' }] })));
    await running.client(CLOUD.name).chat.completions.create({ model: CLOUD.model, messages: [{ role: 'user', content: 'hi' }] });
    const calls = ((await running.control('GET', '/calls')).json as { calls: Call[] }).calls;
    expect(calls.filter((c) => c.target === LOCAL.name).map((c) => c.concurrent).sort()).toEqual([1, 2, 3, 4]);
    expect(calls.find((c) => c.target === CLOUD.name)?.concurrent).toBe(1);
    const targets = ((await running.control('GET', '/targets')).json as { targets: Snapshot[] }).targets;
    expect(targets.find((t) => t.name === LOCAL.name)).toMatchObject({ in_flight: 0, peak_concurrency: 4 });
    await running.control('DELETE', '/calls');
    const cleared = ((await running.control('GET', '/targets')).json as { targets: Snapshot[] }).targets;
    expect(cleared.find((t) => t.name === LOCAL.name)?.peak_concurrency).toBe(0);
  });
});
