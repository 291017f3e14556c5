import { Inject, Injectable } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import type { AgentRole } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import { TaskRunner } from '@switchyard/orchestration';
import { LOGGER } from '@switchyard/platform';
import { TaskProcessor } from './task.processor';
import { ShutdownSignal } from './shutdown-signal';

// One class per queue, because @Processor binds a class to a queue name; all the logic is
// in TaskProcessor. `autorun: false`: WorkerLifecycle starts them once dependencies answer.

@Injectable()
@Processor('extract', { autorun: false })
export class ExtractProcessor extends TaskProcessor {
  readonly role: AgentRole = 'extract';
  constructor(runner: TaskRunner, shutdown: ShutdownSignal, @Inject(LOGGER) logger: Logger) {
    super(runner, shutdown, logger);
  }
}

@Injectable()
@Processor('synthesize', { autorun: false })
export class SynthesizeProcessor extends TaskProcessor {
  readonly role: AgentRole = 'synthesize';
  constructor(runner: TaskRunner, shutdown: ShutdownSignal, @Inject(LOGGER) logger: Logger) {
    super(runner, shutdown, logger);
  }
}

export const PROCESSORS_BY_ROLE = {
  extract: ExtractProcessor,
  synthesize: SynthesizeProcessor,
} as const satisfies Record<AgentRole, new (...args: never[]) => TaskProcessor>;
