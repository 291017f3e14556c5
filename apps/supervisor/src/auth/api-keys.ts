import { createHash, timingSafeEqual } from 'node:crypto';

export const DEV_TENANT = 'dev';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Looks a bearer key up without leaking, through timing, how much of it matched: every
 * configured key is compared in constant time against the digest of the presented one.
 */
export class ApiKeyRegistry {
  private readonly entries: { digest: Buffer; tenant: string }[];

  constructor(keys: ReadonlyMap<string, string>) {
    this.entries = [...keys].map(([key, tenant]) => ({ digest: digest(key), tenant }));
  }

  get devMode(): boolean {
    return this.entries.length === 0;
  }

  tenantFor(presented: string): string | undefined {
    const presentedDigest = digest(presented);
    let tenant: string | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, presentedDigest)) tenant = entry.tenant;
    }
    return tenant;
  }
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
