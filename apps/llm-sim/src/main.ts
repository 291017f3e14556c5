import { createLogger } from '@switchyard/observability';
import { parseSimConfig, type SimConfig, SimConfigError } from './sim-config';
import { createSimulator } from './simulator';

const SERVICE = 'llm-sim';

async function main(): Promise<void> {
  let config: SimConfig;
  try {
    config = parseSimConfig(process.env);
  } catch (error) {
    if (!(error instanceof SimConfigError)) throw error;
    createLogger(SERVICE).fatal(error.message);
    process.exitCode = 1;
    return;
  }

  const logger = createLogger(SERVICE, config.logLevel);
  const simulator = createSimulator(config, { logger });
  const shutdown = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'llm-sim stopping');
    simulator.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'llm-sim stop failed');
        process.exit(1);
      },
    );
  };
  // `once`: a second Ctrl-C falls through to the default handler and kills a stuck shutdown.
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);

  const address = await simulator.start();
  logger.info({ targets: address.targets, control_port: address.controlPort }, 'llm-sim listening');
}

main().catch((error: unknown) => {
  createLogger(SERVICE).fatal({ err: error }, 'llm-sim failed to start');
  process.exitCode = 1;
});
