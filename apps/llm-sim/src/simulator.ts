import { createServer } from 'node:http';
import { createLogger, type Logger } from '@switchyard/observability';
import { CallLog, DEFAULT_CALL_LOG_CAPACITY } from './call-log';
import { createControlHandler } from './control-handler';
import { closeServer, listen } from './http-io';
import { PlanFaults } from './plan-reply';
import type { SimConfig } from './sim-config';
import { TargetServer } from './target-server';

export interface SimulatorAddress {
  targets: { name: string; port: number; model: string }[];
  controlPort: number;
}

export interface Simulator {
  /** Binds every target and the control port; ports given as 0 come back as the ones bound. */
  start(): Promise<SimulatorAddress>;
  /** Closes every port and drops every connection, hung ones included. Safe to call twice. */
  stop(): Promise<void>;
}

export interface SimulatorOptions {
  logger?: Logger;
  callLogCapacity?: number;
}

export function createSimulator(config: SimConfig, options: SimulatorOptions = {}): Simulator {
  const logger = options.logger ?? createLogger('llm-sim', config.logLevel);
  const callLog = new CallLog(options.callLogCapacity ?? DEFAULT_CALL_LOG_CAPACITY);
  const planFaults = new PlanFaults();
  const targets = new Map(config.targets.map((target) => [target.name, new TargetServer(target, { host: config.host, callLog, logger, planFaults })]));
  const control = createServer(createControlHandler({ targets, callLog, logger, planFaults }));
  control.on('error', (error) => logger.error({ err: error }, 'control server error'));
  let started = false;
  let stopping: Promise<void> | null = null;

  async function stop(): Promise<void> {
    stopping ??= Promise.all([...[...targets.values()].map((target) => target.stop()), closeServer(control)]).then(() => undefined);
    return stopping;
  }

  async function start(): Promise<SimulatorAddress> {
    if (started) throw new Error('simulator already started');
    started = true;
    try {
      const ports = await Promise.all([...targets.values()].map((target) => target.start()));
      const controlPort = await listen(control, config.controlPort, config.host);
      const bound = [...targets.values()].map((target, index) => ({ name: target.name, port: ports[index] ?? target.config.port, model: target.config.model }));
      return { targets: bound, controlPort };
    } catch (error) {
      await stop().catch((cleanupError: unknown) => logger.error({ err: cleanupError }, 'cleanup after failed start failed'));
      throw error;
    }
  }

  return { start, stop };
}
