import { ConfigError } from './config-error';
import type { EnvReader } from './parsers';

/** A key held in this process: its private key and its address. */
export interface KeyConfig {
  privateKey: string;
  /** lowercase */
  address: string;
}

/**
 * The treasury and relayer addresses as the API knows them: TREASURY_ADDRESS and RELAYER_ADDRESSES,
 * no private key needed. A process that also holds the keys (the worker, or a single-host dev setup)
 * may leave the addresses unset; when both are given they must agree, so a mistyped address can never
 * be published beside keys that sign for another one.
 */
export function readTreasuryAddress(reader: EnvReader, keyAddress: string | undefined): string {
  const given = reader.raw('TREASURY_ADDRESS') === undefined ? undefined : reader.address('TREASURY_ADDRESS', '');
  if (given !== undefined && keyAddress !== undefined && given !== keyAddress) {
    throw new ConfigError('TREASURY_ADDRESS', `does not match TREASURY_PRIVATE_KEY (whose address is ${keyAddress})`);
  }
  const address = given ?? keyAddress;
  if (address === undefined) throw new ConfigError('TREASURY_ADDRESS', 'is required but not set');
  return address;
}

/** RELAYER_ADDRESSES (comma-separated), else the relayer keys' addresses, else the treasury alone. */
export function readRelayerAddresses(reader: EnvReader, keyAddresses: string[] | undefined, treasuryAddress: string): string[] {
  const given = reader.list('RELAYER_ADDRESSES').map((item, index) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(item)) throw new ConfigError('RELAYER_ADDRESSES', `entry ${index + 1} must be a 20-byte 0x-prefixed hex address`);
    return item.toLowerCase();
  });
  if (given.length === 0) return keyAddresses ?? [treasuryAddress];
  if (new Set(given).size !== given.length) throw new ConfigError('RELAYER_ADDRESSES', 'lists the same address twice');
  if (keyAddresses !== undefined && (given.length !== keyAddresses.length || given.some((a, i) => a !== keyAddresses[i]))) {
    throw new ConfigError('RELAYER_ADDRESSES', 'does not match RELAYER_PRIVATE_KEYS (same addresses, same order)');
  }
  return given;
}

/** RELAYER_PRIVATE_KEYS (comma-separated), else the treasury's key alone; an entry is never echoed (it is a key). */
export function readRelayers(reader: EnvReader, treasury: KeyConfig | undefined): KeyConfig[] {
  const keys = reader.list('RELAYER_PRIVATE_KEYS');
  if (keys.length === 0) {
    if (treasury) return [treasury];
    throw new ConfigError('RELAYER_PRIVATE_KEYS', 'is required without TREASURY_PRIVATE_KEY (the relayers send every settlement; RELAYER_SIGNERS for keys in KMS or an HSM)');
  }
  const relayers = keys.map((key, index) => {
    try {
      return reader.privateKey('RELAYER_PRIVATE_KEYS', key);
    } catch (err) {
      if (err instanceof ConfigError) throw new ConfigError('RELAYER_PRIVATE_KEYS', `entry ${index + 1} must be a 32-byte hex private key`);
      throw err;
    }
  });
  if (new Set(relayers.map((r) => r.address)).size !== relayers.length) {
    throw new ConfigError('RELAYER_PRIVATE_KEYS', 'lists the same key twice');
  }
  return relayers;
}

const SIGNER_KINDS = ['kms:', 'pkcs11:'];

/**
 * Signer specs (RELAYER_SIGNERS, TREASURY_SIGNER): comma-separated, each `kms:<key id, alias or ARN>` or
 * `pkcs11:<RFC 7512 URI>` (a comma inside a URI is written %2C). Only their form is checked here; the worker
 * opens them at start-up (packages/signers), which is where a key that cannot sign is named.
 */
export function readSignerSpecs(reader: EnvReader, name: 'RELAYER_SIGNERS' | 'TREASURY_SIGNER'): string[] {
  const specs = reader.list(name);
  if (name === 'TREASURY_SIGNER' && specs.length > 1) throw new ConfigError(name, 'names one signer (a comma inside a PKCS#11 URI is written %2C)');
  specs.forEach((spec, index) => {
    if (!SIGNER_KINDS.some((kind) => spec.startsWith(kind) && spec.length > kind.length)) {
      throw new ConfigError(name, `entry ${index + 1} must be kms:<key id or ARN> or pkcs11:<RFC 7512 URI> (a comma inside a URI is written %2C)`);
    }
  });
  if (new Set(specs).size !== specs.length) throw new ConfigError(name, 'lists the same signer twice');
  return specs;
}

/** The master key: per-merchant webhook secrets are encrypted with a key derived from it. */
export function readMasterSecret(reader: EnvReader): string {
  const secret = reader.string('WEBHOOK_SECRET');
  if (secret.length < 32) throw new ConfigError('WEBHOOK_SECRET', 'must be at least 32 characters (it is the master key of the merchants\' webhook secrets)');
  return secret;
}

/** WEBHOOK_ALLOWED_PORTS: the ports a webhook URL may name; 443 and 80 unless configured. */
export function readWebhookPorts(reader: EnvReader): number[] {
  const items = reader.list('WEBHOOK_ALLOWED_PORTS');
  if (items.length === 0) return [443, 80];
  return items.map((item) => {
    if (!/^[0-9]{1,5}$/.test(item) || Number(item) < 1 || Number(item) > 65535) {
      throw new ConfigError('WEBHOOK_ALLOWED_PORTS', `entry "${item}" must be a port number (1-65535)`);
    }
    return Number(item);
  });
}
