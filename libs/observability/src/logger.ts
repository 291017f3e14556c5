import pino, { type DestinationStream, type Logger } from 'pino';
import { serializeError } from './error-serializer';
import { activeTraceFields } from './telemetry';

export type { Logger };

/**
 * One JSON line per event. Secrets are redacted by key wherever they appear, so a header
 * map or a config object can be logged without leaking a bearer token or an API key, and
 * database errors lose the values they quote.
 */
export function createLogger(service: string, level: string = 'info', destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name: service,
    level,
    base: { service, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['authorization', '*.authorization', '*.*.authorization', 'apiKey', '*.apiKey', 'api_key', '*.api_key', 'password', '*.password'],
      censor: '[redacted]',
    },
    formatters: { level: (label) => ({ level: label }) },
    // Every line written inside a span names its trace and span, so logs and traces join.
    mixin: activeTraceFields,
    // A database error quotes the values it refused: those may be a tenant's documents.
    serializers: { err: serializeError, error: serializeError },
  };
  // Default: stdout. A benchmark passes /dev/null to keep the cost of logging without the output.
  return destination ? pino(options, destination) : pino(options);
}
