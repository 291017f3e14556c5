import type { LoggerService } from '@nestjs/common';
import type { Logger } from '@switchyard/observability';

/**
 * Nest's own messages (bootstrap, DI errors, exceptions it catches) through our pino logger,
 * as JSON lines like every other, instead of Nest's coloured console text. Nest's `log` (route
 * mapping, "application started") is routine: it goes out at `debug`.
 */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: 'trace' | 'debug' | 'warn' | 'error' | 'fatal', message: unknown, params: unknown[]): void {
    // Nest passes the context (a class name) last; an error's stack before it.
    const strings = params.filter((p): p is string => typeof p === 'string');
    const context = strings.length > 0 ? strings[strings.length - 1] : undefined;
    const stack = level === 'error' && strings.length > 1 ? strings[0] : undefined;
    const fields: Record<string, unknown> = { component: 'nest', ...(context ? { context } : {}), ...(stack ? { stack } : {}) };
    if (message instanceof Error) this.logger[level]({ ...fields, err: message }, message.message);
    else if (typeof message === 'object' && message !== null) this.logger[level]({ ...fields, detail: message }, 'nest');
    else this.logger[level](fields, String(message));
  }
}
