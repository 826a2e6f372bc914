import { ConfigError } from '../config-error';
import { DAY_MS, type EnvReader } from '../parsers';

/** The x402 `bazaar` discovery catalog (issue 45). */
export interface DiscoveryConfig {
  /** a resource not paid for this long leaves the catalog (DISCOVERY_RETENTION_DAYS) */
  retentionMs: number;
  /** new resources beyond this many per payTo are not stored (DISCOVERY_MAX_RESOURCES_PER_PAYTO) */
  maxResourcesPerPayTo: number;
  /** the largest declaration read, in bytes of JSON (DISCOVERY_MAX_DECLARATION_BYTES) */
  maxDeclarationBytes: number;
  /** development and tests only: resource URLs on private or local hosts are listed (DISCOVERY_ALLOW_PRIVATE_URLS) */
  allowPrivateUrls: boolean;
}

export function readDiscovery(reader: EnvReader, production: boolean): DiscoveryConfig {
  const allowPrivateUrls = reader.boolean('DISCOVERY_ALLOW_PRIVATE_URLS', false);
  if (allowPrivateUrls && production) throw new ConfigError('DISCOVERY_ALLOW_PRIVATE_URLS', 'must not be true in production');
  return {
    retentionMs: reader.integer('DISCOVERY_RETENTION_DAYS', 30, 1, 3650) * DAY_MS,
    maxResourcesPerPayTo: reader.integer('DISCOVERY_MAX_RESOURCES_PER_PAYTO', 200, 1, 100_000),
    maxDeclarationBytes: reader.integer('DISCOVERY_MAX_DECLARATION_BYTES', 16 * 1024, 512, 64 * 1024),
    allowPrivateUrls,
  };
}
