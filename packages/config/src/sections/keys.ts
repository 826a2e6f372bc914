import { ConfigError } from '../config-error';
import { readRelayerAddresses, readRelayers, readSignerSpecs, readTreasuryAddress, type KeyConfig } from '../key-addresses';
import type { EnvReader } from '../parsers';
import { readNetworks } from './networks';
import type { WorkerConfig } from './worker';

export type { KeyConfig };

const TRANSACTION_PROVIDERS = ['local', 'openzeppelin-relayer'] as const;

export type TransactionProviderConfig =
  | { kind: 'local' }
  | {
      kind: 'openzeppelin-relayer';
      /** OZ_RELAYER_URL: the relayer server's origin */
      url: string;
      /** OZ_RELAYER_API_KEY */
      apiKey: string;
      /** OZ_RELAYER_IDS_<chainId>: the relayer ids that send on each enabled network (their addresses are read at start-up) */
      relayerIds: ReadonlyMap<number, string[]>;
      /**
       * OZ_RELAYER_ALLOW_TREASURY (default false): the operator accepts that the relayer server signs as the
       * treasury, which makes OZ_RELAYER_API_KEY a credential that can move every merchant's allowance; without
       * it the worker refuses to start when any relayer the key reaches is the treasury
       */
      allowTreasury: boolean;
    };
/** the executor's relayer slots (SettlementExecutor.sol, MAX_RELAYERS) */
export const EXECUTOR_MAX_RELAYERS = 8;

/** The keys a worker signs with, and the addresses they answer to. */
export interface WorkerKeys {
  treasury?: KeyConfig;
  treasurySigner?: string;
  relayers: KeyConfig[];
  relayerSigners: string[];
  /** lowercase */
  treasuryAddress: string;
  /** lowercase */
  relayerAddresses: string[];
}

/** TRANSACTION_PROVIDER and, for the OpenZeppelin Relayer, where it is and which of its relayers send on each network. */
export function readTransactionProvider(reader: EnvReader): TransactionProviderConfig {
  const kind = reader.oneOf('TRANSACTION_PROVIDER', TRANSACTION_PROVIDERS, 'local');
  if (kind === 'local') return { kind };
  const url = reader.url('OZ_RELAYER_URL', ['http:', 'https:']);
  const apiKey = reader.string('OZ_RELAYER_API_KEY');
  const relayerIds = new Map<number, string[]>();
  for (const network of readNetworks(reader)) {
    const ids = reader.list(`OZ_RELAYER_IDS_${network.chainId}`);
    if (ids.length === 0) throw new ConfigError(`OZ_RELAYER_IDS_${network.chainId}`, 'is required with TRANSACTION_PROVIDER=openzeppelin-relayer (the relayer ids that send on this network)');
    relayerIds.set(network.chainId, ids);
  }
  return { kind, url, apiKey, relayerIds, allowTreasury: reader.boolean('OZ_RELAYER_ALLOW_TREASURY', false) };
}

/** The keys of a worker whose transactions go through `provider`. */
export function readWorkerKeys(reader: EnvReader, provider: TransactionProviderConfig, settlementMode: WorkerConfig['settlementMode']): WorkerKeys {
  return provider.kind === 'openzeppelin-relayer' ? readNoKeys(reader) : readLocalKeys(reader, settlementMode);
}

/**
 * TRANSACTION_PROVIDER=openzeppelin-relayer: the relayer server holds every key (a key here as well would
 * sign from an address the relayer also uses); the worker checks at start-up that the treasury's relayer is
 * among them where the sequential path needs it.
 */
function readNoKeys(reader: EnvReader): WorkerKeys {
  for (const name of ['TREASURY_PRIVATE_KEY', 'TREASURY_SIGNER', 'RELAYER_PRIVATE_KEYS', 'RELAYER_SIGNERS'] as const) {
    if (reader.raw(name) !== undefined) throw new ConfigError(name, 'must be unset with TRANSACTION_PROVIDER=openzeppelin-relayer (the relayer server holds the keys)');
  }
  return { treasury: undefined, treasurySigner: undefined, relayers: [], relayerSigners: [], treasuryAddress: readTreasuryAddress(reader, undefined), relayerAddresses: [] };
}

/** The keys this worker signs with: local keys and signer specs. */
function readLocalKeys(reader: EnvReader, settlementMode: WorkerConfig['settlementMode']): WorkerKeys {
  // the treasury key is the one that can take every merchant's whole allowance: read only when given, and
  // needed only where the treasury itself sends (the sequential path)
  const treasury = reader.raw('TREASURY_PRIVATE_KEY') === undefined ? undefined : reader.privateKey('TREASURY_PRIVATE_KEY', reader.raw('TREASURY_PRIVATE_KEY'));
  const treasurySigner = readSignerSpecs(reader, 'TREASURY_SIGNER')[0];
  if (treasury && treasurySigner) throw new ConfigError('TREASURY_SIGNER', 'and TREASURY_PRIVATE_KEY name the same key twice: set one');
  if (!treasury && !treasurySigner && settlementMode === 'sequential') {
    throw new ConfigError('TREASURY_PRIVATE_KEY', 'is required with SETTLEMENT_MODE=sequential (the treasury sends each fee itself); SETTLEMENT_MODE=atomic needs no treasury key in the worker');
  }
  const relayerSigners = readSignerSpecs(reader, 'RELAYER_SIGNERS');
  const relayers = relayerSigners.length > 0 && reader.list('RELAYER_PRIVATE_KEYS').length === 0 ? [] : readRelayers(reader, treasury);
  const treasuryAddress = readTreasuryAddress(reader, treasury?.address);
  const relayerCount = relayers.length + relayerSigners.length;
  if (settlementMode === 'atomic' && relayerCount > EXECUTOR_MAX_RELAYERS) {
    throw new ConfigError('RELAYER_PRIVATE_KEYS', `and RELAYER_SIGNERS name ${relayerCount} keys; the settlement executor admits ${EXECUTOR_MAX_RELAYERS} (or set SETTLEMENT_MODE=sequential)`);
  }
  return {
    treasury,
    treasurySigner,
    relayers,
    relayerSigners,
    treasuryAddress,
    // a signer's address is known only once the worker opens it: RELAYER_ADDRESSES is not compared with it (the API's own setting)
    relayerAddresses: relayerSigners.length > 0 ? relayers.map((r) => r.address) : readRelayerAddresses(reader, relayers.map((r) => r.address), treasuryAddress),
  };
}
