import { z } from 'zod';

export const DEFAULT_TARGETS = 'local_vllm_7b:18101:qwen2.5-7b-instruct,local_vllm_32b:18102:qwen2.5-32b-instruct,cloud_main:18103:gpt-4.1';
export const DEFAULT_CONTROL_PORT = 18100;
export const DEFAULT_HOST = '127.0.0.1';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface TargetConfig {
  name: string;
  /** 0 asks the OS for a free port; the simulator reports the one it got. */
  port: number;
  model: string;
  /** Applied before the first byte of every chat-completion answer. */
  latencyMs: number;
}

export interface SimConfig {
  host: string;
  controlPort: number;
  logLevel: LogLevel;
  targets: TargetConfig[];
}

export class SimConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SimConfigError';
  }
}

const TARGET_NAME = /^[A-Za-z0-9_.-]+$/;
const DIGITS = /^\d+$/;
const MAX_PORT = 65_535;

function parsePort(text: string): number | null {
  if (!DIGITS.test(text)) return null;
  const port = Number(text);
  return port <= MAX_PORT ? port : null;
}

/**
 * `name:port:model[:latencyMs]`. A model id may itself contain colons (`llama3:8b`), so the
 * last field counts as latency only when it is all digits and there are four or more fields.
 */
function parseTargetEntry(entry: string): TargetConfig | string {
  const parts = entry.split(':').map((part) => part.trim());
  if (parts.length < 3) return `expected name:port:model[:latencyMs]`;
  const [name = '', portText = ''] = parts;
  const last = parts[parts.length - 1] ?? '';
  const hasLatency = parts.length >= 4 && DIGITS.test(last);
  const model = parts.slice(2, hasLatency ? -1 : undefined).join(':');
  if (!TARGET_NAME.test(name)) return `name "${name}" must match ${TARGET_NAME.source}`;
  const port = parsePort(portText);
  if (port === null) return `port "${portText}" must be an integer 0..${MAX_PORT}`;
  if (model.length === 0) return 'model must not be empty';
  return { name, port, model, latencyMs: hasLatency ? Number(last) : 0 };
}

/** Unset and empty variables both mean "use the default", as compose files often pass `VAR=`. */
const optionalText = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? fallback : value.trim()));

const EnvSchema = z
  .object({
    LLM_SIM_TARGETS: optionalText(DEFAULT_TARGETS).transform((text, ctx): TargetConfig[] => {
      const targets: TargetConfig[] = [];
      const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry.length > 0);
      entries.forEach((entry, index) => {
        const parsed = parseTargetEntry(entry);
        if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: `entry ${index + 1} ("${entry}"): ${parsed}` });
        else targets.push(parsed);
      });
      if (entries.length === 0) ctx.addIssue({ code: 'custom', message: 'at least one target is required' });
      const seenNames = new Set<string>();
      const seenPorts = new Set<number>();
      for (const target of targets) {
        if (seenNames.has(target.name)) ctx.addIssue({ code: 'custom', message: `duplicate target name "${target.name}"` });
        if (target.port !== 0 && seenPorts.has(target.port)) ctx.addIssue({ code: 'custom', message: `duplicate port ${target.port}` });
        seenNames.add(target.name);
        seenPorts.add(target.port);
      }
      return targets;
    }),
    LLM_SIM_CONTROL_PORT: optionalText(String(DEFAULT_CONTROL_PORT)).transform((text, ctx) => {
      const port = parsePort(text);
      if (port === null) ctx.addIssue({ code: 'custom', message: `"${text}" must be an integer 0..${MAX_PORT}` });
      return port ?? 0;
    }),
    LLM_SIM_HOST: optionalText(DEFAULT_HOST),
    LOG_LEVEL: optionalText('info').pipe(z.enum(LOG_LEVELS)),
  })
  .superRefine((env, ctx) => {
    const clash = env.LLM_SIM_TARGETS.find((target) => target.port !== 0 && target.port === env.LLM_SIM_CONTROL_PORT);
    if (clash) ctx.addIssue({ code: 'custom', path: ['LLM_SIM_CONTROL_PORT'], message: `port ${clash.port} is also used by target "${clash.name}"` });
  });

/** Every configuration problem at once, each prefixed with the variable that caused it. */
export function parseSimConfig(env: Record<string, string | undefined>): SimConfig {
  const result = EnvSchema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(env)'}: ${issue.message}`);
    throw new SimConfigError(`invalid llm-sim configuration: ${lines.join('; ')}`);
  }
  const parsed = result.data;
  return { host: parsed.LLM_SIM_HOST, controlPort: parsed.LLM_SIM_CONTROL_PORT, logLevel: parsed.LOG_LEVEL, targets: parsed.LLM_SIM_TARGETS };
}
