import { SENSITIVITIES, type Sensitivity } from '@switchyard/contracts';
import { AUTO_MODEL, type ModelAlias } from '../config/router-config.schema';

export type AliasResolution = { ok: true; meta: Record<string, unknown>; alias: string | undefined } | { ok: false; model: string };

/**
 * The request meta a gateway call routes by: its `model`'s alias meta, then the body's
 * `metadata` on top (field by field). No model or `auto`: the metadata alone. Whatever either
 * says, the stricter sensitivity of the two holds, so an alias can never relax it.
 */
export function resolveModelAlias(model: string | undefined, aliases: Readonly<Record<string, ModelAlias>>, metadata: Readonly<Record<string, unknown>>): AliasResolution {
  if (model === undefined || model === AUTO_MODEL) return { ok: true, meta: { ...metadata }, alias: undefined };
  if (!Object.hasOwn(aliases, model)) return { ok: false, model };
  const alias = aliases[model]!;
  const meta: Record<string, unknown> = { ...alias, ...metadata };
  const stricter = stricterSensitivity(alias.sensitivity, metadata.sensitivity);
  if (stricter !== undefined) meta.sensitivity = stricter;
  return { ok: true, meta, alias: model };
}

/** The model ids `/v1/models` lists: `auto`, then every alias. */
export function listedModels(aliases: Readonly<Record<string, ModelAlias>>): string[] {
  return [AUTO_MODEL, ...Object.keys(aliases).sort()];
}

function stricterSensitivity(a: unknown, b: unknown): Sensitivity | undefined {
  const rank = (value: unknown) => SENSITIVITIES.indexOf(value as Sensitivity);
  const best = Math.max(rank(a), rank(b));
  return best < 0 ? undefined : SENSITIVITIES[best];
}
