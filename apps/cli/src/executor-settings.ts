import { getAddress } from 'ethers';
import { EnvReader, readRelayerAddresses, readRelayers, readTreasuryAddress, type Env } from '@facilitator/config';
import { executorTargets } from '@facilitator/payment-mechanisms';
import type { ExecutorConfig } from '@facilitator/evm-executor';
import type { ChainSettings } from './chain-context';
import { CliError } from './errors';

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
 * exactly this (token, the mechanisms' targets, treasury, FEE_AMOUNT, relayers) before it settles atomically, so the CLI reads it
 * with the worker's own rules (packages/config), down to the treasury as the only relayer when no relayer
 * key is set. Addresses come out checksummed, as the CLI prints them.
 */
export function resolveExecutorSettings(settings: ChainSettings, env: Env = process.env): ExecutorSettings {
  const reader = new EnvReader(env);
  const rawKey = reader.raw('TREASURY_PRIVATE_KEY');
  const treasuryKey = rawKey === undefined ? undefined : reader.privateKey('TREASURY_PRIVATE_KEY', rawKey);
  if (treasuryKey === undefined && reader.raw('TREASURY_ADDRESS') === undefined) {
    throw new CliError('the treasury is not known: set TREASURY_PRIVATE_KEY (or, to check the status only, TREASURY_ADDRESS)');
  }
  const treasury = readTreasuryAddress(reader, treasuryKey?.address);
  // only keys that were given: with none, the treasury is the relayer, but `executor setup` then sends as the treasury
  const relayerKeys = reader.list('RELAYER_PRIVATE_KEYS').length > 0 ? readRelayers(reader, { privateKey: '', address: treasury }) : [];
  const relayers = readRelayerAddresses(reader, relayerKeys.length > 0 ? relayerKeys.map((k) => k.address) : undefined, treasury);
  return {
    config: {
      chainId: settings.network.chainId,
      token: settings.tokenAddress,
      targets: executorTargets({ chainId: settings.network.chainId, tokenAddress: settings.tokenAddress.toLowerCase() }),
      treasury: getAddress(treasury),
      fee: settings.feeAmount,
      relayers: relayers.map((a) => getAddress(a)),
    },
    treasuryKey: treasuryKey?.privateKey,
    relayerKeys: relayerKeys.map((k) => k.privateKey),
  };
}
