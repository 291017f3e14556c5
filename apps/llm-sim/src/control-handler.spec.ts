import type { CallRecord } from './call-log';
import type { TargetSnapshot } from './target-server';
import { CLOUD, LOCAL, rawRequest, type RunningSim, startSim } from '../test/sim-harness';

describe('llm-sim control server', () => {
  let running: RunningSim;

  beforeEach(async () => {
    running = await startSim();
  });
  afterEach(async () => {
    await running.sim.stop();
  });

  const targets = async () => ((await running.control('GET', '/targets')).json as { targets: TargetSnapshot[] }).targets;
  const calls = async (query = '') => ((await running.control('GET', `/calls${query}`)).json as { calls: CallRecord[] }).calls;

  it('reports health and the bound ports of every target', async () => {
    expect(await running.control('GET', '/health')).toEqual({ status: 200, json: { status: 'ok' } });
    const listed = await targets();
    expect(listed.map((t) => [t.name, t.port, t.model, t.mode, t.listening])).toEqual([
      [LOCAL.name, running.portOf(LOCAL.name), LOCAL.model, 'ok', true],
      [CLOUD.name, running.portOf(CLOUD.name), CLOUD.model, 'ok', true],
    ]);
    expect(running.address.targets.every((t) => t.port > 0)).toBe(true);
    expect(running.address.controlPort).toBeGreaterThan(0);
  });

  it('PUT mode returns the new state with defaults filled in', async () => {
    const res = await running.control('PUT', `/targets/${LOCAL.name}/mode`, { mode: 'slow', count: 3 });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ name: LOCAL.name, mode: 'slow', params: { delay_ms: 5000, retry_after_s: 1, fail_ratio: 1, count: 3, remaining: 3 } });
  });

  it('PUT mode: unknown target 404, bad bodies 400 naming the field', async () => {
    expect((await running.control('PUT', '/targets/nope/mode', { mode: 'error' })).status).toBe(404);

    const badMode = await running.control('PUT', `/targets/${LOCAL.name}/mode`, { mode: 'explode' });
    expect(badMode.status).toBe(400);
    expect(badMode.json).toMatchObject({ error: { field: 'mode', message: expect.stringContaining('mode') } });

    const badRatio = await running.control('PUT', `/targets/${LOCAL.name}/mode`, { mode: 'error', fail_ratio: 1.5 });
    expect(badRatio.json).toMatchObject({ error: { field: 'fail_ratio' } });

    const typo = await running.control('PUT', `/targets/${LOCAL.name}/mode`, { mode: 'slow', delayMs: 10 });
    expect(typo.status).toBe(400);
    expect(JSON.stringify(typo.json)).toContain('delayMs');

    const downWithCount = await running.control('PUT', `/targets/${LOCAL.name}/mode`, { mode: 'down', count: 2 });
    expect(downWithCount.json).toMatchObject({ error: { field: 'count' } });

    const notJson = await running.control('PUT', `/targets/${LOCAL.name}/mode`, '{mode');
    expect(notJson.status).toBe(400);
    expect((await targets())[0]?.mode).toBe('ok');
  });

  it('records every chat call with its x-switchyard-* headers and outcome', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const client = running.client(LOCAL.name, { headers: { 'x-switchyard-job-id': 'job-42', 'x-switchyard-task-id': 'task-7', 'x-other': 'ignored', traceparent } });
    await client.chat.completions.create({ model: LOCAL.model, messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'Summarise the incident.' }] });
    await running.setMode(LOCAL.name, { mode: 'ratelimit', count: 1 });
    await expect(client.chat.completions.create({ model: LOCAL.model, messages: [{ role: 'user', content: 'again' }], stream: true })).rejects.toMatchObject({ status: 429 });
    await rawRequest(running.portOf(CLOUD.name), 'POST', '/v1/chat/completions', JSON.stringify({ model: 'wrong', messages: [{ role: 'user', content: 'x' }] }));

    const all = await calls();
    expect(all).toHaveLength(3);
    expect(all[0]).toMatchObject({
      seq: 1,
      target: LOCAL.name,
      model: LOCAL.model,
      stream: false,
      status: 200,
      outcome: 'ok',
      headers: { 'x-switchyard-job-id': 'job-42', 'x-switchyard-task-id': 'task-7' },
      traceparent,
      message_chars: 'sys'.length + 'Summarise the incident.'.length,
      last_user_message_preview: 'Summarise the incident.',
    });
    expect(Object.keys(all[0]?.headers ?? {})).toEqual(['x-switchyard-job-id', 'x-switchyard-task-id']);
    expect(new Date(all[0]?.at ?? '').toISOString()).toBe(all[0]?.at);
    expect(all[1]).toMatchObject({ seq: 2, stream: true, status: 429, outcome: 'ratelimit' });
    expect(all[2]).toMatchObject({ seq: 3, target: CLOUD.name, model: 'wrong', status: 404, outcome: 'error' });

    expect((await calls(`?target=${LOCAL.name}`)).map((c) => c.seq)).toEqual([1, 2]);
    expect((await calls('?since_seq=1')).map((c) => c.seq)).toEqual([2, 3]);
    expect((await running.control('GET', '/calls?since_seq=abc')).status).toBe(400);

    const local = (await targets()).find((t) => t.name === LOCAL.name);
    expect(local?.calls).toEqual({ ok: 1, error: 0, ratelimit: 1, hang: 0, garbage: 0, wrong: 0, total: 2 });
    expect(local?.mode).toBe('ok'); // count: 1 used up
  });

  it('DELETE /calls clears the log; seq keeps increasing', async () => {
    await running.client(LOCAL.name).chat.completions.create({ model: LOCAL.model, messages: [{ role: 'user', content: 'one' }] });
    expect(await running.control('DELETE', '/calls')).toEqual({ status: 200, json: { cleared: 1 } });
    expect(await calls()).toEqual([]);
    await running.client(LOCAL.name).chat.completions.create({ model: LOCAL.model, messages: [{ role: 'user', content: 'two' }] });
    expect((await calls()).map((c) => c.seq)).toEqual([2]);
  });

  it('POST /reset puts every target back to ok (re-opening down ports) and clears the log', async () => {
    await running.client(CLOUD.name).chat.completions.create({ model: CLOUD.model, messages: [{ role: 'user', content: 'x' }] });
    await running.setMode(LOCAL.name, { mode: 'down' });
    await running.setMode(CLOUD.name, { mode: 'garbage' });
    const res = await running.control('POST', '/reset');
    expect(res.status).toBe(200);
    expect((await targets()).map((t) => [t.mode, t.listening, t.calls.total])).toEqual([
      ['ok', true, 0],
      ['ok', true, 0],
    ]);
    expect(await calls()).toEqual([]);
    const completion = await running.client(LOCAL.name).chat.completions.create({ model: LOCAL.model, messages: [{ role: 'user', content: 'back' }] });
    expect(JSON.parse(completion.choices[0]?.message.content ?? '').conclusion).toBe('[local_vllm_7b] back');
  });

  it('answers unknown control routes with 404', async () => {
    expect((await running.control('GET', '/nope')).status).toBe(404);
  });
});
