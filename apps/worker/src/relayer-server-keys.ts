import type { TransactionProviderConfig } from '@facilitator/config';
import { OpenZeppelinRelayerClient, resolveRelayerBindings, type RelayerBinding } from '@facilitator/relayer-openzeppelin';

/** The keys as an OpenZeppelin Relayer server holds them: this worker holds none. */
export interface RelayerServerKeys {
  kind: 'openzeppelin-relayer';
  client: OpenZeppelinRelayerClient;
  bindings: RelayerBinding[];
  /** the treasury is one of the relayer server's relayers on every network: the sequential path can send its fees */
  treasurySigns: boolean;
  /** ids of the relayer server's relayers (configured or not) whose signer is the treasury: OZ_RELAYER_ALLOW_TREASURY allowed them */
  treasuryRelayers: string[];
  /** lowercase addresses of the relayers that are not the treasury, the same on every network */
  relayerAddresses: string[];
  close(): Promise<void>;
}

/** A relayer server that cannot be used, named in one line (the worker stops with it at start-up). */
export class RelayerServerError extends Error {}

/**
 * Asks the relayer server for each configured relayer (an EVM relayer, neither paused nor disabled) and
 * its address. Every network must have the same relayer addresses (the settlement executor names them),
 * and the treasury's address counts as the treasury's relayer, not as one that relays payments.
 */
export async function openRelayerServerKeys(
  provider: Extract<TransactionProviderConfig, { kind: 'openzeppelin-relayer' }>,
  treasuryAddress: string,
): Promise<RelayerServerKeys> {
  const client = new OpenZeppelinRelayerClient({ baseUrl: provider.url, apiKey: provider.apiKey });
  let bindings: RelayerBinding[];
  try {
    bindings = await resolveRelayerBindings(client, [...provider.relayerIds].flatMap(([chainId, ids]) => ids.map((id) => ({ id, chainId }))));
  } catch (error) {
    throw new RelayerServerError(`OpenZeppelin Relayer at ${new URL(provider.url).origin}: ${(error as Error).message}`);
  }
  const treasury = treasuryAddress.toLowerCase();
  const treasuryRelayers = await treasuryRelayersOf(client, provider, treasury);
  const perNetwork = [...provider.relayerIds.keys()].map((chainId) => ({
    chainId,
    addresses: bindings.filter((b) => b.chainId === chainId).map((b) => b.address),
  }));
  const relayers = (addresses: string[]) => [...new Set(addresses.filter((a) => a !== treasury))].sort();
  const [first, ...others] = perNetwork;
  for (const network of others) {
    if (relayers(network.addresses).join() !== relayers(first.addresses).join()) {
      throw new RelayerServerError(`the OpenZeppelin relayers of chain ${network.chainId} send as other addresses than those of chain ${first.chainId}: give each network relayers with the same signers`);
    }
  }
  const relayerAddresses = relayers(first.addresses);
  if (relayerAddresses.length === 0) throw new RelayerServerError('every configured OpenZeppelin relayer is the treasury: give relayers that relay payments');
  return {
    kind: 'openzeppelin-relayer',
    client,
    bindings,
    treasurySigns: perNetwork.every((n) => n.addresses.includes(treasury)),
    treasuryRelayers,
    relayerAddresses,
    close: async () => undefined,
  };
}

/**
 * The ids of the relayers OZ_RELAYER_API_KEY reaches whose signer is the treasury: configured or not, the key
 * can send through any relayer of the server, so one of them being the treasury makes the key a treasury
 * credential (it can transferFrom every merchant's whole allowance to any address). Refused unless the operator
 * opts in with OZ_RELAYER_ALLOW_TREASURY=true (issue 40).
 */
async function treasuryRelayersOf(
  client: OpenZeppelinRelayerClient,
  provider: Extract<TransactionProviderConfig, { kind: 'openzeppelin-relayer' }>,
  treasury: string,
): Promise<string[]> {
  let listed;
  try {
    listed = await client.listRelayers();
  } catch (error) {
    throw new RelayerServerError(`OpenZeppelin Relayer at ${new URL(provider.url).origin}: could not list its relayers: ${(error as Error).message}`);
  }
  const ids = listed.filter((r) => r.address?.toLowerCase() === treasury).map((r) => r.id);
  if (ids.length > 0 && !provider.allowTreasury) {
    throw new RelayerServerError(
      `relayer ${ids.join(', ')} of the OpenZeppelin Relayer signs as the treasury ${treasury}: OZ_RELAYER_API_KEY could then move every merchant's whole allowance to any address. ` +
        'Remove it from the relayer server (the atomic path needs no treasury relayer), or set OZ_RELAYER_ALLOW_TREASURY=true to hold that API key as a treasury credential',
    );
  }
  return ids;
}
