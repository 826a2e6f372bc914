import { getAddress } from 'ethers';
import { EnvReader, type Env } from '@facilitator/config';
import type { ExecutorConfig } from '@facilitator/settlement-contract';
import type { ChainSettings } from './chain-context';
import { CliError } from './errors';
import { parseAddress } from './format';

/** What the executor commands read, from the same variables as the worker. */
export interface ExecutorSettings {
  config: ExecutorConfig;
  /** TREASURY_PRIVATE_KEY, when set (only `executor setup` needs it) */
  treasuryKey?: string;
  /** RELAYER_PRIVATE_KEYS in order; may be empty */
  relayerKeys: string[];
}

/**
 * The configuration the treasury's executor must hold: the worker compares the delegated executor with
 * exactly this (token, treasury, FEE_AMOUNT, relayers) before it settles atomically, so the CLI reads it
 * the same way, down to the fallback of the treasury as the only relayer when no relayer key is set.
 */
export function resolveExecutorSettings(settings: ChainSettings, env: Env = process.env): ExecutorSettings {
  const reader = new EnvReader(env);
  const rawKey = reader.raw('TREASURY_PRIVATE_KEY');
  const treasuryKey = rawKey === undefined ? undefined : reader.privateKey('TREASURY_PRIVATE_KEY', rawKey);
  const treasury = resolveExecutorTreasury(reader, treasuryKey?.address);
  const relayerKeys = readRelayerKeys(reader);
  return {
    config: {
      chainId: settings.network.chainId,
      token: settings.tokenAddress,
      treasury,
      fee: settings.feeAmount,
      relayers: resolveRelayers(reader, relayerKeys.map((k) => k.address), treasury),
    },
    treasuryKey: treasuryKey?.privateKey,
    relayerKeys: relayerKeys.map((k) => k.privateKey),
  };
}

/** TREASURY_ADDRESS, else the key's address; both set, they must agree (as the service insists). */
function resolveExecutorTreasury(reader: EnvReader, keyAddress: string | undefined): string {
  const given = reader.raw('TREASURY_ADDRESS');
  const fromKey = keyAddress === undefined ? undefined : getAddress(keyAddress);
  if (given === undefined) {
    if (fromKey === undefined) throw new CliError('the treasury is not known: set TREASURY_PRIVATE_KEY (or, to check the status only, TREASURY_ADDRESS)');
    return fromKey;
  }
  const address = parseAddress('TREASURY_ADDRESS', given);
  if (fromKey !== undefined && fromKey !== address) throw new CliError(`TREASURY_ADDRESS ${address} does not match TREASURY_PRIVATE_KEY (whose address is ${fromKey})`);
  return address;
}

function readRelayerKeys(reader: EnvReader): Array<{ privateKey: string; address: string }> {
  const keys = reader.list('RELAYER_PRIVATE_KEYS').map((key, index) => {
    try {
      const parsed = reader.privateKey('RELAYER_PRIVATE_KEYS', key);
      return { privateKey: parsed.privateKey, address: getAddress(parsed.address) };
    } catch {
      // never echo the value: it is a key
      throw new CliError(`RELAYER_PRIVATE_KEYS entry ${index + 1} must be a 32-byte hex private key`);
    }
  });
  if (new Set(keys.map((k) => k.address)).size !== keys.length) throw new CliError('RELAYER_PRIVATE_KEYS lists the same key twice');
  return keys;
}

/** RELAYER_ADDRESSES, else the relayer keys' addresses, else the treasury alone (it then sends settlements itself). */
function resolveRelayers(reader: EnvReader, keyAddresses: string[], treasury: string): string[] {
  const given = reader.list('RELAYER_ADDRESSES').map((item, index) => parseAddress(`RELAYER_ADDRESSES entry ${index + 1}`, item));
  if (given.length === 0) return keyAddresses.length > 0 ? keyAddresses : [treasury];
  if (new Set(given).size !== given.length) throw new CliError('RELAYER_ADDRESSES lists the same address twice');
  if (keyAddresses.length > 0 && (given.length !== keyAddresses.length || given.some((a, i) => a !== keyAddresses[i]))) {
    throw new CliError('RELAYER_ADDRESSES does not match RELAYER_PRIVATE_KEYS (same addresses, same order)');
  }
  return given;
}
