import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { toFieldIssues, type FieldIssue } from '@switchyard/contracts';

/** A tenant's limits (SPEC §6, `config/tenants.yaml`); `null` means no limit. */
export interface TenantLimits {
  max_running_jobs: number;
  daily_budget_usd: number | null;
  gateway_rpm: number | null;
}

const maxRunning = z.number().int().min(1).max(100_000);
const budget = z.number().min(0).nullable();
const rpm = z.number().int().min(1).nullable();

const TenantOverridesSchema = z.strictObject({
  max_running_jobs: maxRunning.optional(),
  daily_budget_usd: budget.optional(),
  gateway_rpm: rpm.optional(),
});

export const TenantsConfigSchema = z.strictObject({
  defaults: z
    .strictObject({ max_running_jobs: maxRunning.default(2), daily_budget_usd: budget.default(null), gateway_rpm: rpm.default(null) })
    .default({ max_running_jobs: 2, daily_budget_usd: null, gateway_rpm: null }),
  global: z.strictObject({ max_running_jobs: maxRunning.default(64) }).default({ max_running_jobs: 64 }),
  tenants: z.record(z.string().min(1).max(128), TenantOverridesSchema).nullable().default({}),
});
export type TenantsConfig = z.infer<typeof TenantsConfigSchema>;

export class TenantsConfigError extends Error {
  constructor(
    readonly source: string,
    readonly issues: FieldIssue[],
    options?: ErrorOptions,
  ) {
    super(`${source}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, options);
    this.name = 'TenantsConfigError';
  }
}

/** Reads and validates a tenants file; throws `TenantsConfigError` naming the file and each path. */
export function loadTenantsConfig(filePath: string): TenantsConfig {
  let text: string;
  try {
    text = readFileSync(filePath, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TenantsConfigError(filePath, [{ path: '(file)', message: `cannot be read: ${reason}` }], { cause: error });
  }
  return parseTenantsConfig(text, filePath);
}

export function parseTenantsConfig(yamlText: string, source: string): TenantsConfig {
  const lineCounter = new LineCounter();
  const document = parseDocument(yamlText, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    const issues = document.errors.map((error): FieldIssue => {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      return { path: `(yaml) line ${line}, column ${col}`, message: error.message };
    });
    throw new TenantsConfigError(source, issues, { cause: document.errors[0] });
  }
  const parsed = TenantsConfigSchema.safeParse(document.toJS() ?? {});
  if (!parsed.success) throw new TenantsConfigError(source, toFieldIssues(parsed.error), { cause: parsed.error });
  return parsed.data;
}

/** A tenant's limits: its own entry over the defaults. */
export function limitsFor(config: TenantsConfig, tenantId: string): TenantLimits {
  const own = config.tenants && Object.hasOwn(config.tenants, tenantId) ? config.tenants[tenantId] : undefined;
  return {
    max_running_jobs: own?.max_running_jobs ?? config.defaults.max_running_jobs,
    daily_budget_usd: own?.daily_budget_usd !== undefined ? own.daily_budget_usd : config.defaults.daily_budget_usd,
    gateway_rpm: own?.gateway_rpm !== undefined ? own.gateway_rpm : config.defaults.gateway_rpm,
  };
}
