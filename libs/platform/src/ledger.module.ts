import { Global, Inject, Module, type BeforeApplicationShutdown, type DynamicModule } from '@nestjs/common';
import { MetricsRegistry, registerProcessMetrics, type Logger } from '@switchyard/observability';
import { LedgerWriter, UpstreamMetricsObserver, type CallObserver, type LedgerSource } from '@switchyard/router';
import { LedgerRepository, type DatabaseHandle } from '@switchyard/state';
import { CALL_OBSERVERS, DATABASE, LOGGER } from './tokens';

/**
 * The buffered ledger, for the attempts no caller has written itself: a worker's job calls
 * write theirs durably (IdempotentModelRouter), and a second row would count them twice.
 */
export function skipRecordedByCaller(ledger: CallObserver): CallObserver {
  return {
    onAttempt: (event) => {
      if (!event.recordedByCaller) ledger.onAttempt(event);
    },
  };
}

/** Ledger rows written durably by the callers themselves (a worker's job calls), for the written-rows metric. */
export class DurableLedgerRows {
  private count = 0;

  add(rows: number): void {
    this.count += rows;
  }

  get written(): number {
    return this.count;
  }
}

/**
 * The cost ledger and the process's metrics: the ledger writer (rows to Postgres in
 * batches, for the calls that do not record their attempts durably themselves) and the upstream counters, both handed to the router as `CALL_OBSERVERS`, and
 * the `MetricsRegistry` that /metrics renders. The writer is flushed before the database
 * pool closes on shutdown (`beforeApplicationShutdown` runs before CoreModule's
 * `onApplicationShutdown`, and after the workers have finished their tasks).
 */
@Global()
@Module({})
export class LedgerModule implements BeforeApplicationShutdown {
  constructor(@Inject(LedgerWriter) private readonly writer: LedgerWriter) {}

  static forRoot(source: LedgerSource): DynamicModule {
    return {
      module: LedgerModule,
      providers: [
        {
          provide: MetricsRegistry,
          useFactory: () => {
            const registry = new MetricsRegistry();
            registerProcessMetrics(registry, source === 'gateway' ? 'supervisor' : 'worker');
            return registry;
          },
        },
        { provide: LedgerRepository, inject: [DATABASE], useFactory: (database: DatabaseHandle) => new LedgerRepository(database.db, database.pool) },
        DurableLedgerRows,
        {
          provide: LedgerWriter,
          inject: [LedgerRepository, LOGGER, MetricsRegistry, DurableLedgerRows],
          useFactory: (ledger: LedgerRepository, logger: Logger, registry: MetricsRegistry, durableRows: DurableLedgerRows) => {
            const writer = new LedgerWriter({ source, sink: (rows) => ledger.insertMany(rows), logger: logger.child({ component: 'ledger' }) });
            registry.collected('switchyard_ledger_rows_written_total', 'Cost-ledger rows written to Postgres.', 'counter', () => [
              [{}, writer.stats().written + durableRows.written],
            ]);
            registry.collected('switchyard_ledger_rows_dropped_total', 'Cost-ledger rows lost (buffer full or shutdown).', 'counter', () => [[{}, writer.stats().dropped]]);
            registry.collected('switchyard_ledger_failed_writes_total', 'Failed cost-ledger batch writes (retried).', 'counter', () => [[{}, writer.stats().failedWrites]]);
            registry.collected('switchyard_ledger_rows_quarantined_total', 'Cost-ledger rows the database refused for their data, left out so the others are written.', 'counter', () => [[{}, writer.stats().quarantined]]);
            registry.collected('switchyard_ledger_rows_buffered', 'Cost-ledger rows waiting to be written.', 'gauge', () => [[{}, writer.stats().buffered]]);
            return writer;
          },
        },
        { provide: UpstreamMetricsObserver, inject: [MetricsRegistry], useFactory: (registry: MetricsRegistry) => new UpstreamMetricsObserver(registry) },
        {
          provide: CALL_OBSERVERS,
          inject: [LedgerWriter, UpstreamMetricsObserver],
          useFactory: (writer: LedgerWriter, metrics: UpstreamMetricsObserver): CallObserver[] => [skipRecordedByCaller(writer), metrics],
        },
      ],
      exports: [MetricsRegistry, LedgerRepository, LedgerWriter, DurableLedgerRows, CALL_OBSERVERS],
    };
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.writer.close();
  }
}
