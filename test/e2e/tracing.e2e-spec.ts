/**
 * One trace per job, across processes: the supervisor and the workers export to an in-process
 * OTLP receiver (http/json, and http/protobuf in its own stack); the llm-sim records the `traceparent` each call brought. A task
 * resumed after its worker was killed continues the same trace. An unreachable collector
 * costs nothing a request can see.
 */
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { FAST_LIVENESS, callsOfTask, logEvents, submitJobs, taskRows, waitForJobs } from '../support/recovery-helpers';
import { freePort, waitFor } from '../support/processes';
import { TestStack } from '../support/stack';

jest.setTimeout(150_000);

async function traceIdOfJob(stack: TestStack, jobId: string): Promise<string> {
  const result = await stack.db.pool.query<{ trace_context: { traceparent?: string } | null }>('select trace_context from agent_task_state where task_id = $1', [jobId]);
  const traceparent = result.rows[0]?.trace_context?.traceparent ?? '';
  const traceId = traceparent.split('-')[1];
  if (!traceId) throw new Error(`job ${jobId} has no stored trace context (${traceparent})`);
  return traceId;
}

describe('tracing: one trace per job across the supervisor, the workers and the upstream', () => {
  let receiver: OtlpReceiver;
  let stack: TestStack;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    stack = await TestStack.start({ workers: 0, env: { ...FAST_LIVENESS, ...receiver.env('http/json') } });
    await stack.startWorker({ WORKER_ID: 'victim' });
    await stack.startWorker({ WORKER_ID: 'survivor' });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  it('a doc_review job yields one trace with supervisor and worker spans, a span per upstream attempt, and its trace id upstream', async () => {
    const [jobId] = await submitJobs(stack, 1, 2);
    const statuses = await waitForJobs(stack, [jobId!]);
    expect(statuses.get(jobId!)?.status).toBe('success');
    const traceId = await traceIdOfJob(stack, jobId!);
    const tasks = await taskRows(stack, [jobId!]);
    const calls = (await stack.simCalls()).filter((call) => tasks.some((task) => callsOfTask([call], task.task_id).length > 0));
    expect(calls.length).toBeGreaterThanOrEqual(tasks.length);
    // Every upstream call of the job carried the job's trace id.
    for (const call of calls) expect(call.traceparent?.split('-')[1]).toBe(traceId);

    const spans = await waitFor(
      'every task span and upstream span of the job to be exported',
      async () => {
        const inTrace = receiver.inTrace(traceId);
        const taskSpans = inTrace.filter((s) => s.name.startsWith('task '));
        const upstream = inTrace.filter((s) => s.name.startsWith('upstream '));
        return taskSpans.length >= tasks.length && upstream.length >= calls.length ? inTrace : undefined;
      },
      20_000,
      100,
    );
    const services = new Set(spans.map((s) => s.service));
    expect(services).toEqual(new Set(['switchyard-supervisor', 'switchyard-worker']));
    const named = (prefix: string) => spans.filter((s) => s.name.startsWith(prefix));
    expect(named('POST /v1/jobs').map((s) => s.service)).toEqual(['switchyard-supervisor']);
    expect(named('plan job')).toHaveLength(1);
    expect(named('enqueue ')).toHaveLength(1);
    expect(new Set(named('task ').map((s) => s.attributes['switchyard.task_id']))).toEqual(new Set(tasks.map((t) => t.task_id)));
    expect(named('step ').length).toBeGreaterThanOrEqual(tasks.length);
    // One span per upstream attempt, each the parent of the traceparent its call sent.
    const upstream = named('upstream ');
    expect(upstream).toHaveLength(calls.length);
    expect(new Set(calls.map((c) => c.traceparent?.split('-')[2]))).toEqual(new Set(upstream.map((s) => s.spanId)));
    for (const span of upstream) {
      expect(span.attributes).toEqual(
        expect.objectContaining({
          'switchyard.target': expect.any(String),
          'gen_ai.request.model': expect.any(String),
          'switchyard.outcome': 'ok',
          'gen_ai.usage.output_tokens': expect.any(Number),
          'switchyard.cost_usd': expect.any(Number),
        }),
      );
    }
    // Parent links hold within the trace: every span but the request's has its parent in it.
    const ids = new Set(spans.map((s) => s.spanId));
    const roots = spans.filter((s: ReceivedSpan) => !ids.has(s.parentSpanId));
    expect(roots.map((s) => s.name)).toEqual(['POST /v1/jobs']);

    // Log lines written inside the job's spans name its trace (and, in the supervisor, the request).
    const submitted = logEvents(stack.supervisor.output, 'job submitted').find((e) => e.job_id === jobId);
    expect(submitted).toEqual(expect.objectContaining({ trace_id: traceId, span_id: expect.any(String), request_id: expect.any(String) }));
    const started = stack.workers.flatMap((w) => logEvents(w.output, 'task started')).filter((e) => e.job_id === jobId);
    expect(started.length).toBe(tasks.length);
    for (const event of started) expect(event.trace_id).toBe(traceId);
    // Everything the processes wrote is JSON, Nest's own messages included.
    for (const line of [...stack.supervisor.output, ...stack.workers.flatMap((w) => w.output)]) expect(() => JSON.parse(line) as unknown).not.toThrow();
  });

  it('a task resumed after its worker was killed continues its job trace', async () => {
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 2_500 });
    const [jobId] = await submitJobs(stack, 1, 4);
    const victimTasks = await waitFor(
      'the victim to be mid-step',
      async () => {
        const held = (await taskRows(stack, [jobId!])).filter((t) => t.lease_owner === 'victim' && t.status === 'running' && t.current_step === 1);
        return held.length > 0 ? held : undefined;
      },
      30_000,
      50,
    );
    stack.workers[0]!.kill('SIGKILL');
    await stack.workers[0]!.waitForExit();
    await stack.setSimMode('local_vllm_7b', { mode: 'slow', delay_ms: 100 });
    expect((await waitForJobs(stack, [jobId!])).get(jobId!)?.status).toBe('success');
    const traceId = await traceIdOfJob(stack, jobId!);

    const resumed = (await taskRows(stack, [jobId!])).filter((t) => victimTasks.some((v) => v.task_id === t.task_id));
    expect(resumed.every((t) => t.retry_count >= 1 && t.lease_owner === 'survivor')).toBe(true);
    // The victim's span of a task never ended (it was killed), so an exported task span of it is the survivor's.
    const resumedSpans = await waitFor(
      'the resumed tasks spans',
      async () => {
        const found = receiver.spans.filter((s) => s.name.startsWith('task ') && resumed.some((t) => t.task_id === s.attributes['switchyard.task_id']));
        return found.length >= resumed.length ? found : undefined;
      },
      20_000,
      100,
    );
    expect(new Set(resumedSpans.map((s) => s.traceId))).toEqual(new Set([traceId]));
  });
});

describe('tracing: OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf', () => {
  let receiver: OtlpReceiver;
  let stack: TestStack;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    stack = await TestStack.start({ workers: 1, env: receiver.env('http/protobuf') });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  it("exports the job's spans from the supervisor and the worker as protobuf", async () => {
    const [jobId] = await submitJobs(stack, 1, 2);
    expect((await waitForJobs(stack, [jobId!])).get(jobId!)?.status).toBe('success');
    const traceId = await traceIdOfJob(stack, jobId!);
    const tasks = await taskRows(stack, [jobId!]);
    const spans = await waitFor(
      'the task and upstream spans of the job',
      async () => {
        const inTrace = receiver.inTrace(traceId);
        const taskSpans = inTrace.filter((s) => s.name.startsWith('task '));
        return taskSpans.length >= tasks.length && inTrace.some((s) => s.name.startsWith('upstream ')) ? inTrace : undefined;
      },
      20_000,
      100,
    );
    expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/x-protobuf']));
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['switchyard-supervisor', 'switchyard-worker']));
    expect(spans.filter((s) => s.name === 'POST /v1/jobs')).toHaveLength(1);
    expect(new Set(spans.filter((s) => s.name.startsWith('task ')).map((s) => s.attributes['switchyard.task_id']))).toEqual(new Set(tasks.map((t) => t.task_id)));
    // Attributes of every kind came through the binary encoding: strings, integers, doubles.
    expect(spans.find((s) => s.name.startsWith('upstream '))?.attributes).toEqual(
      expect.objectContaining({ 'switchyard.target': expect.any(String), 'gen_ai.usage.output_tokens': expect.any(Number), 'switchyard.cost_usd': expect.any(Number) }),
    );
    const ids = new Set(spans.map((s) => s.spanId));
    expect(spans.filter((s) => !ids.has(s.parentSpanId)).map((s) => s.name)).toEqual(['POST /v1/jobs']);
  });
});

describe('tracing: an unreachable collector', () => {
  let stack: TestStack;

  afterAll(async () => {
    await stack?.stop();
  });

  it('never fails a request', async () => {
    // A port nothing listens on: every export is refused.
    const port = await freePort();
    stack = await TestStack.start({ workers: 1, env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' } });
    const jobIds = await submitJobs(stack, 2, 2);
    expect([...(await waitForJobs(stack, jobIds)).values()].map((s) => s.status)).toEqual(['success', 'success']);
    for (const jobId of jobIds) expect((await stack.request('GET', `/v1/jobs/${jobId}`)).status).toBe(200);
    expect((await stack.request('GET', '/healthz')).status).toBe(200);
    // The dropped batches are said, as JSON warnings.
    await waitFor('a telemetry warning', async () => (stack.supervisor.output.some((line) => line.includes('"component":"telemetry"')) ? true : undefined), 20_000, 100);
  });
});
