import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { FactoryProvider } from '@nestjs/common';
import OpenAI from 'openai';
import pino from 'pino';
import { loadConfig, type AppConfig } from '@switchyard/config';
import { MetricsRegistry, createLogger, inSpan, startTelemetry, type Logger } from '@switchyard/observability';
import {
  IdempotentModelRouter,
  callMeta,
  parseJobMeta,
  renderContext,
  runCallStep,
  stepCallFields,
  tracedModelRouter,
  type ChatMessage,
  type ModelRouter,
} from '@switchyard/orchestration';
import { TenantsConfigStore, connectRedis, routerProvider, skipRecordedByCaller } from '@switchyard/platform';
import { LedgerWriter, UpstreamMetricsObserver, estimateTokens, type CallObserver, type Router } from '@switchyard/router';
import {
  AttemptLedgerRepository,
  GroupCommittedAttemptLedger,
  GroupCommittedCallResults,
  LedgerRepository,
  ModelCallResultRepository,
  connectDatabase,
} from '@switchyard/state';
import { loadWorkflowsDir, renderMessages, type CallStep } from '@switchyard/workflows';
import { cpuSnapshot, cpuSpent } from '../support/cpu';
import { Cleanup, QueryCounter, connectRedis as connectMonitorRedis } from '../support/resources';
import { forEachLimit, secondsSince } from '../pipeline/flow-helpers';
import type { CallRoundRequest, CallRoundResult } from './settings';

/**
 * One round of the call-path bench in a fresh process: builds the variant's caller as the
 * worker app builds it, warms up, then times `calls` calls with `concurrency` in flight.
 * Replies over IPC.
 */
export type CallRoundReply = { ok: true; result: CallRoundResult } | { ok: false; error: string };

/** The Postgres statements of the round process's pool (the monitor's are not counted). */
const statements = new QueryCounter();

/** One call of the extract step: its rendered messages and the task it belongs to. */
type Call = (messages: ChatMessage[]) => Promise<unknown>;

const VOCABULARY = (
  'the warranty period covers defects in materials and workmanship for twelve months from delivery ' +
  'claims need an invoice and a serial number returned goods must be packed in their original box ' +
  'the supplier repairs or replaces the part at its choice shipping costs are borne by the customer ' +
  'batteries carry six months consumables are excluded damage from misuse voids this clause ' +
  'notice must be given in writing within thirty days of discovery liability is limited to the price paid'
).split(' ');

/** Prose-like text of `chars` characters from a seeded generator: every document differs, as real ones do. */
function documentText(chars: number, seed: number): string {
  let state = seed * 7919 + 17;
  const next = () => (state = (state * 16807) % 2147483647);
  const parts: string[] = [];
  let length = 0;
  let sentence = 0;
  while (length < chars) {
    const word = next() % 7 === 0 ? String(next() % 1000) : VOCABULARY[next() % VOCABULARY.length]!;
    sentence += 1;
    const piece = sentence > 12 && next() % 5 === 0 ? `${word}.` : word;
    if (piece.endsWith('.')) sentence = 0;
    parts.push(piece);
    length += piece.length + 1;
    if (next() % 40 === 0) parts.push('\n\n');
  }
  return parts.join(' ').slice(0, chars);
}

/** The doc_review extract agent's call step with its messages rendered for `count` different documents. */
function extractCalls(config: AppConfig, documentChars: number, count: number): { step: CallStep; messages: ChatMessage[][] } {
  const workflow = loadWorkflowsDir(config.WORKFLOWS_DIR).workflows.get('doc_review');
  const agent = workflow?.agentsByRole.get('extract');
  const step = agent?.steps.find((s): s is CallStep => s.kind === 'call');
  if (!workflow || !agent || !step) throw new Error('the shipped doc_review workflow has no extract call step');
  const question = 'What does the contract say about the warranty period and how to claim it?';
  const messages = Array.from({ length: count }, (_, i) => {
    const item = { id: `doc-${i + 1}`, text: documentText(documentChars, i + 1) };
    const input = { question, documents: [item] };
    return renderMessages(step, renderContext(input, { item, item_index: 0, item_key: item.id }, { outputs: {}, summaries: {} }, {})).messages;
  });
  return { step, messages };
}

/** The worker app's Router, from the same provider factory the worker module uses. */
function workerRouter(config: AppConfig, logger: Logger, cleanup: Cleanup): { router: Router; database: ReturnType<typeof connectDatabase> } {
  const database = connectDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, application_name: 'sy-bench-call-path' });
  statements.attach(database.pool);
  cleanup.add('database pool', () => database.close());
  const redis = connectRedis(config, 'sy-bench-call-path');
  cleanup.add('redis', async () => {
    redis.disconnect();
  });
  const registry = new MetricsRegistry();
  const writer = new LedgerWriter({ source: 'worker', sink: (rows) => new LedgerRepository(database.db, database.pool).insertMany(rows), logger });
  cleanup.add('ledger writer', () => writer.close());
  const observers: CallObserver[] = [skipRecordedByCaller(writer), new UpstreamMetricsObserver(registry)];
  const tenants = new TenantsConfigStore(config, logger);
  const factory = (routerProvider as FactoryProvider<Router>).useFactory;
  const router = factory(config, logger, redis, observers, tenants, database) as Router;
  cleanup.add('router', () => router.close());
  return { router, database };
}

async function caller(request: CallRoundRequest, cleanup: Cleanup): Promise<{ call: Call; step: CallStep; messages: ChatMessage[][] }> {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: request.dbUrl,
    QUEUE_PREFIX: request.prefix,
    ROUTER_CONFIG: request.routerConfig,
  });
  const { step, messages } = extractCalls(config, request.settings.documentChars, 64);
  // The worker app's logger at its default level, written to /dev/null.
  const logger = createLogger('worker', config.LOG_LEVEL, pino.destination({ dest: '/dev/null', sync: true })).child({ component: 'router' });
  const meta = callMeta(step, parseJobMeta({}));
  const shutdown = new AbortController();
  setMaxListeners(0, shutdown.signal);

  if (request.variant === 'sdk') {
    const { router } = workerRouter(config, logger, cleanup);
    const target = router.decide(meta).target;
    const client = new OpenAI({ baseURL: target.endpoint, apiKey: 'not-needed', maxRetries: 0, logLevel: 'off' });
    const call: Call = async (callMessages) => {
      const stream = await client.chat.completions.create({
        model: target.model,
        messages: callMessages,
        stream: true,
        stream_options: { include_usage: true },
        response_format: { type: 'json_object' },
        ...(meta.max_output_tokens ? { max_tokens: meta.max_output_tokens } : {}),
      });
      let content = '';
      for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
      return content;
    };
    return { call, step, messages };
  }

  const { router, database } = workerRouter(config, logger, cleanup);
  const tenantId = 'bench-call-path';
  if (request.variant === 'router') {
    const call: Call = (callMessages) => {
      const jobId = randomUUID();
      return router.chat({
        meta,
        messages: callMessages,
        jsonMode: true,
        ...(meta.max_output_tokens ? { maxTokens: meta.max_output_tokens } : {}),
        context: { tenantId, jobId, taskId: randomUUID(), step: 1, jobTaskCount: 6 },
      });
    };
    return { call, step, messages };
  }

  // What TaskRunner.runSteps does around one call step (the worker module's router stack).
  const results = new ModelCallResultRepository(database.db, database.pool);
  const ledger = new AttemptLedgerRepository(database.db, database.pool);
  const perCall = request.variant === 'worker-per-call';
  const paidOnce: ModelRouter = perCall
    ? new IdempotentModelRouter(router, results, { ledger })
    : new IdempotentModelRouter(router, new GroupCommittedCallResults(results), { ledger: new GroupCommittedAttemptLedger(ledger) });
  const traced = tracedModelRouter({
    chat: (chat) =>
      paidOnce.chat({
        ...chat,
        // worker-per-call: every input tokenized exactly, as the router did before it bounded the size first.
        ...(perCall ? { meta: { ...chat.meta, estimated_input_tokens: estimateTokens(chat.messages) } } : {}),
        // worker: each call is its task's first run, as TaskRunner marks it (no paid-once lookup);
        // worker-per-call keeps the lookup, as every call made it before.
        ...(chat.context ? { context: { ...chat.context, jobTaskCount: 6, ...(perCall ? {} : { firstLease: true }) } } : {}),
      }),
  });
  const call: Call = (callMessages) => {
    const task = { taskId: randomUUID(), tenantId, jobId: randomUUID() };
    return inSpan('step extract', { 'switchyard.step': 1, 'switchyard.step_kind': 'call' }, () =>
      runCallStep(traced, step, callMessages, meta, stepCallFields({ task, step: 1, signal: shutdown.signal })),
    );
  };
  return { call, step, messages };
}

async function runRound(request: CallRoundRequest, cleanup: Cleanup): Promise<CallRoundResult> {
  const s = request.settings;
  // As the worker app does at boot: spans are made, exported only when an OTLP endpoint is set.
  const telemetry = startTelemetry({ serviceName: 'switchyard-bench', exportFromEnv: Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT) });
  cleanup.add('telemetry', () => telemetry.shutdown());
  const { call, messages } = await caller(request, cleanup);
  const monitorRedis = connectMonitorRedis('sy-bench-call-path-monitor');
  cleanup.add('monitor redis', async () => {
    monitorRedis.disconnect();
  });
  const monitorDb = connectDatabase(request.dbUrl, { max: 1, application_name: 'sy-bench-call-path-monitor' });
  cleanup.add('monitor pool', () => monitorDb.close());
  const postgres = { pool: monitorDb.pool, database: new URL(request.dbUrl).pathname.slice(1) };
  const run = (count: number) =>
    forEachLimit(count, s.concurrency, async (i) => {
      await call(messages[i % messages.length]!);
    });
  await run(s.warmupCalls);
  const profiler = request.profileFile ? await startProfiler() : undefined;
  const before = await cpuSnapshot(monitorRedis, postgres);
  statements.reset();
  const start = process.hrtime.bigint();
  await run(s.calls);
  const seconds = secondsSince(start);
  const queries = statements.total;
  const cpu = cpuSpent(before, await cpuSnapshot(monitorRedis, postgres));
  if (profiler && request.profileFile) writeFileSync(request.profileFile, JSON.stringify(await profiler.stop()));
  return { variant: request.variant, label: request.label, calls: s.calls, seconds, cpu, queries };
}

/** The V8 CPU profiler over the timed calls only (not start-up or warm-up, as `--cpu-prof` would). */
async function startProfiler(): Promise<{ stop: () => Promise<unknown> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    stop: async () => {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      return profile;
    },
  };
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '') as CallRoundRequest;
  const cleanup = new Cleanup();
  const onSignal = () => {
    void cleanup.runAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let reply: CallRoundReply;
  try {
    reply = { ok: true, result: await runRound(request, cleanup) };
  } catch (error) {
    reply = { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  } finally {
    await cleanup.runAll();
  }
  await new Promise<void>((resolve) => process.send!(reply, () => resolve()));
  process.exit(0);
}

void main();
