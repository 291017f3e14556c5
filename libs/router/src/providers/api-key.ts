import type { TargetConfig } from '../config/router-config.schema';
import { DROP_REASONS, type CandidateDrop, type CandidateFilter } from '../routing/candidate-filter';

/** Looks a secret up by environment variable name. The library never reads `process.env` itself. */
export type SecretResolver = (envVarName: string) => string | undefined;

/** What local servers get when they need no key; the SDK refuses an empty one. */
export const NO_KEY_NEEDED = 'not-needed';

/** The key to send to a target, or `undefined` when a cloud target's configured key is missing. */
export function resolveApiKey(target: TargetConfig, secrets: SecretResolver): string | undefined {
  if (target.api_key_env === undefined) return NO_KEY_NEEDED;
  const key = secrets(target.api_key_env);
  if (key !== undefined && key !== '') return key;
  return target.type === 'local' ? NO_KEY_NEEDED : undefined;
}

const MISSING_KEY_DROP: CandidateDrop = { reason: DROP_REASONS.missingApiKey };

/** Drops a cloud target whose `api_key_env` names a variable that holds no key. */
export function missingApiKeyFilter(secrets: SecretResolver): CandidateFilter {
  return (target) => (resolveApiKey(target, secrets) === undefined ? MISSING_KEY_DROP : null);
}
