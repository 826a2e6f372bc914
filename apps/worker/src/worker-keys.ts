import type { WorkerProcessConfig } from '@facilitator/config';
import { checkSigner, createSigner, createSigners, LocalKeySigner, SignerError, type Signer, type SignerEnvironment } from '@facilitator/signers';
import { getAddress } from 'ethers';
import { openRelayerServerKeys, type RelayerServerKeys } from './relayer-server-keys';

/** Whatever this worker sends with: keys it holds through signers, or a relayer server's. */
export type WorkerKeys = LocalWorkerKeys | RelayerServerKeys;

/** Opens the keys of TRANSACTION_PROVIDER: signers here, or the relayer server's relayers. */
export async function openKeysOf(config: WorkerProcessConfig, env: SignerEnvironment = process.env): Promise<WorkerKeys> {
  const provider = config.transactionProvider;
  return provider.kind === 'openzeppelin-relayer' ? openRelayerServerKeys(provider, config.treasuryAddress) : openWorkerKeys(config, env);
}

/** The keys this worker sends with, whatever holds them (local, AWS KMS, a PKCS#11 HSM). */
export interface LocalWorkerKeys {
  kind: 'local';
  /** the treasury's key, only where the worker takes the sequential path (TREASURY_PRIVATE_KEY or TREASURY_SIGNER) */
  treasury?: Signer;
  /** every relayer: RELAYER_PRIVATE_KEYS first, then RELAYER_SIGNERS, in their order */
  relayers: Signer[];
  /** lowercase relayer addresses, the form stored in Postgres and compared with the executor's */
  relayerAddresses: string[];
  close(): Promise<void>;
}

/**
 * Opens every key at start-up and has each sign and recover one digest, so that a key that cannot sign (a
 * wrong PIN, a disabled KMS key, an unreachable HSM) stops the worker with one SignerError line naming it,
 * before it takes a job. The treasury's signer must be TREASURY_ADDRESS's key.
 */
export async function openWorkerKeys(
  config: Pick<WorkerProcessConfig, 'treasury' | 'treasurySigner' | 'treasuryAddress' | 'relayers' | 'relayerSigners'>,
  env: SignerEnvironment = process.env,
): Promise<LocalWorkerKeys> {
  const opened: Signer[] = [];
  try {
    const treasury = config.treasury
      ? new LocalKeySigner(config.treasury.privateKey, { expectedAddress: config.treasury.address })
      : config.treasurySigner
        ? await createSigner(config.treasurySigner, env)
        : undefined;
    if (treasury) {
      opened.push(treasury);
      if (treasury.address !== getAddress(config.treasuryAddress)) {
        throw new SignerError(treasury.description, `its address is ${treasury.address}, not TREASURY_ADDRESS ${getAddress(config.treasuryAddress)}`);
      }
    }
    // the treasury's own key relays when no relayer is configured: one signer for both roles
    const local = config.relayers.map((key) =>
      treasury && getAddress(key.address) === treasury.address ? treasury : new LocalKeySigner(key.privateKey, { expectedAddress: key.address }),
    );
    opened.push(...local.filter((s) => s !== treasury));
    const remote = await createSigners(config.relayerSigners, env);
    opened.push(...remote);
    const relayers = [...local, ...remote];
    const seen = new Map<string, Signer>();
    for (const signer of relayers) {
      const earlier = seen.get(signer.address);
      if (earlier) throw new SignerError(signer.description, `is the same key as ${earlier.description} (${signer.address}): list each key once`);
      seen.set(signer.address, signer);
    }
    await Promise.all([...new Set([...(treasury ? [treasury] : []), ...relayers])].map((signer) => checkSigner(signer)));
    return {
      kind: 'local',
      treasury,
      relayers,
      relayerAddresses: relayers.map((s) => s.address.toLowerCase()),
      close: async () => {
        await Promise.allSettled(opened.map((s) => s.close()));
      },
    };
  } catch (error) {
    await Promise.allSettled(opened.map((s) => s.close()));
    throw error;
  }
}
