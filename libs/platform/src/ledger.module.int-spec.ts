import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { LedgerWriter, type AttemptEvent, type CallObserver } from '@switchyard/router';
import { createTestDatabase, type TestDatabase } from '@switchyard/state/testing/test-database';
import { CoreModule } from './core.module';
import { LedgerModule } from './ledger.module';
import { CALL_OBSERVERS } from './tokens';

// Real Postgres (fresh database, real migrations) and Redis; the Nest app is the real modules.
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.destroy();
});

const event: AttemptEvent = {
  at: new Date(),
  target: { name: 'local_vllm_7b', type: 'local', model: 'qwen2.5-7b-instruct' },
  rule: 'fallback',
  meta: { task_type: 'extract', complexity: 'low', sensitivity: 'internal', priority: 'normal', tags: [] },
  context: { tenantId: 'acme' },
  outcome: 'ok',
  usage: { inputTokens: 10, outputTokens: 5, estimated: false },
  latencyMs: 3,
  costUsd: 0.01,
  attempt: 1,
};

describe('LedgerModule', () => {
  it('hands the router its observers, and writes buffered rows on shutdown before the pool closes', async () => {
    const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    const app = await NestFactory.createApplicationContext(
      { module: class LedgerTestModule {}, imports: [CoreModule.forRoot(config, 'worker', createLogger('worker', 'silent')), LedgerModule.forRoot('worker')] },
      { logger: false },
    );
    await app.init();
    const observers = app.get<CallObserver[]>(CALL_OBSERVERS);
    for (const observer of observers) observer.onAttempt(event);

    await app.close(); // well inside the writer's flush interval: only the shutdown flush can have written it
    const rows = await database.pool.query<{ tenant_id: string; source: string }>('select tenant_id, source from model_call_ledger');
    expect(rows.rows).toEqual([{ tenant_id: 'acme', source: 'worker' }]);
  });

  it('writes the other rows of a batch that holds a row Postgres refuses (NUL, lone surrogate), and quarantines that row', async () => {
    const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    const app = await NestFactory.createApplicationContext(
      { module: class PoisonLedgerTestModule {}, imports: [CoreModule.forRoot(config, 'gateway', createLogger('gateway', 'silent')), LedgerModule.forRoot('gateway')] },
      { logger: false },
    );
    await app.init();
    try {
      const writer = app.get(LedgerWriter);
      const tenant = 'poison-check';
      const withBusinessType = (business_type: string): AttemptEvent => ({ ...event, context: { tenantId: tenant }, meta: { ...event.meta, business_type } });
      for (const businessType of ['before', 'x\u0000y', 'b\udc00', 'after']) writer.onAttempt(withBusinessType(businessType));
      await writer.flush();
      writer.onAttempt(withBusinessType('later'));
      await writer.flush();

      const rows = await database.pool.query<{ business_type: string }>('select business_type from model_call_ledger where tenant_id = $1 order by id', [tenant]);
      expect(rows.rows.map((r) => r.business_type)).toEqual(['before', 'after', 'later']);
      expect(writer.stats()).toMatchObject({ written: 3, quarantined: 2, buffered: 0, failedWrites: 0 });
    } finally {
      await app.close();
    }
  });

  it('leaves out of the buffered ledger the attempts their caller has written durably (no double count)', async () => {
    await database.pool.query('delete from model_call_ledger');
    const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    const app = await NestFactory.createApplicationContext(
      { module: class LedgerTestModule {}, imports: [CoreModule.forRoot(config, 'worker', createLogger('worker', 'silent')), LedgerModule.forRoot('worker')] },
      { logger: false },
    );
    await app.init();
    for (const observer of app.get<CallObserver[]>(CALL_OBSERVERS)) {
      observer.onAttempt({ ...event, context: { tenantId: 'durable' }, recordedByCaller: true });
      observer.onAttempt(event);
    }
    const writer = app.get(LedgerWriter);
    await app.close();
    expect(writer.stats()).toMatchObject({ written: 1, dropped: 0 });
    const rows = await database.pool.query<{ tenant_id: string }>('select tenant_id from model_call_ledger');
    expect(rows.rows).toEqual([{ tenant_id: 'acme' }]);
  });
});
