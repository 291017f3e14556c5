import { ModelSummarySchema } from '@switchyard/contracts';
import { APIError, NotFoundError } from 'openai';
import { chatBody, CLOUD, LOCAL, rawRequest, type RunningSim, startSim } from '../test/sim-harness';

const QUESTION = 'Why did the nightly import fail?  The log shows a timeout. Retries were exhausted! Check the DB.';

describe('llm-sim through the official openai SDK', () => {
  let running: RunningSim;

  beforeAll(async () => {
    running = await startSim();
  });
  afterAll(async () => {
    await running.sim.stop();
  });

  it('answers a plain completion with the summary JSON and usage', async () => {
    const completion = await running.client(LOCAL.name).chat.completions.create({
      model: LOCAL.model,
      messages: [
        { role: 'system', content: 'Answer as JSON.' },
        { role: 'user', content: QUESTION },
      ],
      response_format: { type: 'json_object' },
      temperature: 0,
      max_tokens: 256,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe(LOCAL.model);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.choices[0]?.message.role).toBe('assistant');
    const summary = ModelSummarySchema.parse(JSON.parse(completion.choices[0]?.message.content ?? ''));
    expect(summary.conclusion).toBe('[local_vllm_7b] Why did the nightly import fail? The log shows a timeout. Retries were exhausted! Check the DB.');
    expect(summary.evidence).toEqual(['Why did the nightly import fail?', 'The log shows a timeout.', 'Retries were exhausted!']);
    expect(summary.confidence).toBe(0.8);
    const content = completion.choices[0]?.message.content ?? '';
    expect(completion.usage).toEqual({
      prompt_tokens: Math.ceil(('Answer as JSON.'.length + QUESTION.length) / 4),
      completion_tokens: Math.ceil(content.length / 4),
      total_tokens: Math.ceil(('Answer as JSON.'.length + QUESTION.length) / 4) + Math.ceil(content.length / 4),
    });
  });

  it('is deterministic for the same request', async () => {
    const ask = () => running.client(CLOUD.name).chat.completions.create({ model: CLOUD.model, messages: [{ role: 'user', content: QUESTION }] });
    const [a, b] = await Promise.all([ask(), ask()]);
    expect(a.choices[0]?.message.content).toBe(b.choices[0]?.message.content);
    expect(JSON.parse(a.choices[0]?.message.content ?? '')).toMatchObject({ confidence: 0.9 });
  });

  it('streams role, content pieces, stop and a usage chunk', async () => {
    const stream = await running.client(CLOUD.name).chat.completions.create({
      model: CLOUD.model,
      messages: [{ role: 'user', content: QUESTION }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const contentChunks = chunks.filter((chunk) => (chunk.choices[0]?.delta.content ?? '') !== '');
    expect(contentChunks.length).toBeGreaterThan(1);
    const finish = chunks.find((chunk) => chunk.choices[0]?.finish_reason === 'stop');
    expect(finish).toBeDefined();
    const last = chunks[chunks.length - 1];
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.total_tokens).toBeGreaterThan(0);
    const content = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    const summary = ModelSummarySchema.parse(JSON.parse(content));
    expect(summary.conclusion.startsWith('[cloud_main] ')).toBe(true);
    expect(last?.usage?.completion_tokens).toBe(Math.ceil(content.length / 4));
  });

  it('streams without a usage chunk unless asked, and ends with [DONE]', async () => {
    const res = await rawRequest(running.portOf(CLOUD.name), 'POST', '/v1/chat/completions', chatBody(CLOUD.model, 'hi', { stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(res.body).not.toContain('"usage"');
  });

  it('accepts content given as an array of text parts', async () => {
    const completion = await running.client(LOCAL.name).chat.completions.create({
      model: LOCAL.model,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Part one. ' }, { type: 'text', text: 'Part two.' }] }],
    });
    expect(JSON.parse(completion.choices[0]?.message.content ?? '').conclusion).toBe('[local_vllm_7b] Part one. Part two.');
  });

  it('lists the model and reports health', async () => {
    const models = await running.client(LOCAL.name).models.list();
    expect(models.data).toEqual([expect.objectContaining({ id: LOCAL.model, object: 'model', owned_by: 'llm-sim' })]);
    const health = await rawRequest(running.portOf(LOCAL.name), 'GET', '/health');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
  });

  it('answers 404 model_not_found for another model, as vLLM does', async () => {
    const call = running.client(LOCAL.name).chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'x' }] });
    await expect(call).rejects.toBeInstanceOf(NotFoundError);
    await expect(call).rejects.toMatchObject({ status: 404, code: 'model_not_found', type: 'invalid_request_error', message: expect.stringContaining('The model `gpt-4.1` does not exist') });
  });

  it('answers 400 naming the field for a bad body', async () => {
    const res = await rawRequest(running.portOf(LOCAL.name), 'POST', '/v1/chat/completions', JSON.stringify({ model: LOCAL.model, messages: [{ role: 'robot', content: 'x' }] }));
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages.0.role' });
    expect(body.error.message).toContain('messages.0.role');
    expect(body.error).toHaveProperty('code');

    const missing = await rawRequest(running.portOf(LOCAL.name), 'POST', '/v1/chat/completions', JSON.stringify({ model: LOCAL.model }));
    expect(JSON.parse(missing.body).error.param).toBe('messages');
  });

  it('answers 400 through the SDK too, and for a body that is not JSON', async () => {
    const call = running.client(LOCAL.name).chat.completions.create({ model: LOCAL.model, messages: [], temperature: 7 });
    await expect(call).rejects.toBeInstanceOf(APIError);
    await expect(call).rejects.toMatchObject({ status: 400 });
    const res = await rawRequest(running.portOf(LOCAL.name), 'POST', '/v1/chat/completions', '{"model":');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error.type).toBe('invalid_request_error');
  });

  it('answers unknown routes with OpenAI-style 404 and wrong methods with 405', async () => {
    const unknown = await rawRequest(running.portOf(LOCAL.name), 'GET', '/v1/embeddings');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.type).toBe('invalid_request_error');
    const wrongMethod = await rawRequest(running.portOf(LOCAL.name), 'GET', '/v1/chat/completions');
    expect(wrongMethod.status).toBe(405);
  });
});
