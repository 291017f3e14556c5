import OpenAI, { APIError } from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { parse, stringify } from 'yaml';
import { TestStack } from '../support/stack';

/**
 * The gateway as an agent framework uses it (issue 10): the official `openai` SDK with tools,
 * tool messages, structured output, stop/seed, model aliases and OpenAI-shaped errors, against
 * the real supervisor and llm-sim.
 */
const KEY = 'sdk-gateway-key-0001';

interface SimCallWithParams {
  target: string;
  last_user_message_preview: string;
  params?: Record<string, unknown>;
}

const weather: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

function withAliases(yaml: string): string {
  const doc = parse(yaml) as { router: Record<string, unknown> };
  doc.router.models = { deep: { task_type: 'reasoning', complexity: 'high' }, quick: { task_type: 'extract', complexity: 'low' } };
  doc.router.gateway = { max_n: 2 };
  doc.router.probes = { enabled: false };
  return stringify(doc);
}

jest.setTimeout(120_000);

describe('the gateway through the official openai SDK (real supervisor + llm-sim)', () => {
  let stack: TestStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await TestStack.start({ apiKeys: `acme:${KEY}`, workers: 0, editRouterConfig: withAliases });
    client = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const callsWith = async (marker: string) => ((await stack.simCalls()) as unknown as SimCallWithParams[]).filter((c) => c.last_user_message_preview.includes(marker));

  it('GET /v1/models lists auto and every alias', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(['auto', 'deep', 'quick']);
  });

  it('a request naming only an alias routes by its meta; a sensitive one stays local whatever the alias says', async () => {
    const deep = await client.chat.completions.create({ model: 'deep', messages: [{ role: 'user', content: 'alias-1: think hard' }] }).withResponse();
    expect(deep.response.headers.get('x-switchyard-target')).toBe('cloud_main');
    const quick = await client.chat.completions.create({ model: 'quick', messages: [{ role: 'user', content: 'alias-2: extract' }] }).withResponse();
    expect(quick.response.headers.get('x-switchyard-target')).toBe('local_vllm_7b');
    const sensitive = await client.chat.completions
      .create({ model: 'deep', messages: [{ role: 'user', content: 'alias-3: private' }], metadata: { sensitivity: 'sensitive' } })
      .withResponse();
    expect(sensitive.response.headers.get('x-switchyard-target')).toBe('local_vllm_32b');
  });

  it('a tool-call round trip: assistant tool_calls → tool message → final answer (plain)', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'tools-plain: weather in Oslo?' }];
    const first = await client.chat.completions.create({ model: 'auto', messages, tools: [weather], tool_choice: 'auto', parallel_tool_calls: false });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(JSON.parse(call.type === 'function' ? call.function.arguments : '{}')).toHaveProperty('city');
    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' });
    const final = await client.chat.completions.create({ model: 'auto', messages, tools: [weather] });
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(final.choices[0]!.message.content).toContain('sunny, 21 C');
    const upstream = await callsWith('tools-plain');
    expect(upstream[0]!.params).toMatchObject({ tools: [weather], tool_choice: 'auto', parallel_tool_calls: false });
  });

  it('a tool-call round trip, streaming', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'tools-stream: weather in Bergen?' }];
    const first = await client.chat.completions.stream({ model: 'auto', messages, tools: [weather], stream_options: { include_usage: true } }).finalChatCompletion();
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(first.usage?.total_tokens).toBeGreaterThan(0);
    messages.push({ role: 'assistant', content: null, tool_calls: choice.message.tool_calls! }, { role: 'tool', tool_call_id: call.id, content: 'rain, 9 C' });
    const final = await client.chat.completions.stream({ model: 'auto', messages, tools: [weather] }).finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(final.choices[0]!.message.content).toContain('rain, 9 C');
  });

  it('json_schema structured output reaches the upstream and comes back as JSON the schema accepts', async () => {
    const schema = { type: 'object', properties: { conclusion: { type: 'string' }, confidence: { type: 'number' } }, required: ['conclusion'] };
    const reply = await client.chat.completions.create({
      model: 'quick',
      messages: [{ role: 'user', content: 'schema-1: summarise: the contract renews yearly.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'summary', schema, strict: true } },
    });
    expect(typeof (JSON.parse(reply.choices[0]!.message.content!) as { conclusion: unknown }).conclusion).toBe('string');
    const upstream = await callsWith('schema-1');
    expect(upstream[0]!.params?.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'summary', schema, strict: true } });
  });

  it('stop, seed, top_p, user and n reach the upstream (the sim’s call log), n choices come back', async () => {
    const reply = await client.chat.completions.create({
      model: 'quick',
      messages: [{ role: 'user', content: 'params-1: hello' }],
      stop: ['zzz-never'],
      seed: 42,
      top_p: 0.5,
      user: 'end-user-7',
      n: 2,
    });
    expect(reply.choices.map((c) => c.index)).toEqual([0, 1]);
    const upstream = await callsWith('params-1');
    expect(upstream[0]!.params).toMatchObject({ stop: ['zzz-never'], seed: 42, top_p: 0.5, user: 'end-user-7', n: 2 });
  });

  it('errors parse as OpenAI errors in the SDK (type, param, code); nothing reaches an upstream', async () => {
    const before = (await stack.simCalls()).length;
    const orphan = await client.chat.completions
      .create({ model: 'auto', messages: [{ role: 'user', content: 'err-1' }, { role: 'tool', tool_call_id: 'nope', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(orphan).toBeInstanceOf(OpenAI.BadRequestError);
    expect(orphan).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'messages[1].tool_call_id', code: 'invalid_request' });

    const tooMany = await client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'err-2' }], n: 3 }).catch((e: unknown) => e);
    expect(tooMany).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'n' });

    const badTool = await client.chat.completions
      .create({ model: 'auto', messages: [{ role: 'user', content: 'err-3' }], tools: [{ type: 'function', function: { name: 'has space' } }] })
      .catch((e: unknown) => e);
    expect(badTool).toMatchObject({ status: 400, param: 'tools[0].function.name' });

    const badSchema = await client.chat.completions
      .create({ model: 'auto', messages: [{ role: 'user', content: 'err-4' }], response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'nonsense' } } } })
      .catch((e: unknown) => e);
    expect(badSchema).toMatchObject({ status: 400, param: 'response_format.json_schema.schema' });

    const unknown = await client.chat.completions.create({ model: 'gpt-9', messages: [{ role: 'user', content: 'err-5' }] }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown).toMatchObject({ status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model' });

    const anonymous = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: 'wrong', maxRetries: 0 });
    const denied = await anonymous.models.list().catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(APIError);
    expect(denied).toMatchObject({ status: 401, type: 'authentication_error' });

    expect((await stack.simCalls()).length).toBe(before);
  });
});
