import { Interface, JsonRpcProvider } from 'ethers';
import { bytesToHex, domainSeparator } from '@facilitator/core';
import type { RpcCaller } from './rpc';
import { counterfactualCheckCall, counterfactualVerdict, parseErc6492Signature } from './erc6492';
import { UsdcClient } from './usdc-client';

export interface ChainEndpoint {
  chainId: number;
  provider: JsonRpcProvider;
  /** the hot path's lean client (authorizationState on every verify): a JsonRpcBatchClient, or the network's endpoint pool */
  rpc: RpcCaller;
  tokenAddress: string;
  /** pinned by configuration; otherwise read from the token once */
  eip712Name?: string;
  eip712Version?: string;
  /** lowercase; the factories an ERC-6492 signature may deploy the payer's wallet through (WALLET_FACTORIES_<chainId>) */
  walletFactories?: readonly string[];
}

/** A contract wallet's answer: accepted, refused (with why), or undefined when the signer is an ordinary key. */
export type ContractSignatureVerdict = boolean | { refused: string } | undefined;

const erc1271 = new Interface(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)']);
const ERC1271_MAGIC = '0x1626ba7e';

/**
 * Read-only chain access for verification. The EIP-712 domain is pinned per network, never taken from
 * a request: read once from the token (or configuration) and kept for the life of the process.
 */
export class RpcChainReader {
  private readonly endpoints = new Map<number, ChainEndpoint & { token: UsdcClient }>();
  private readonly separators = new Map<number, Promise<Uint8Array>>();

  constructor(endpoints: readonly ChainEndpoint[]) {
    // the token is read through UsdcClient, on the hot path's lean client
    for (const endpoint of endpoints) this.endpoints.set(endpoint.chainId, { ...endpoint, token: new UsdcClient(endpoint.provider, endpoint.tokenAddress, endpoint.rpc) });
  }

  private endpoint(chainId: number): ChainEndpoint & { token: UsdcClient } {
    const endpoint = this.endpoints.get(chainId);
    if (!endpoint) throw new Error(`network ${chainId} is not enabled`);
    return endpoint;
  }

  async tokenDomain(chainId: number): Promise<{ name: string; version: string; chainId: number; verifyingContract: string }> {
    const endpoint = this.endpoint(chainId);
    const { eip712Name, eip712Version } = endpoint;
    const read = eip712Name !== undefined && eip712Version !== undefined ? undefined : await endpoint.token.eip712NameAndVersion();
    return { name: eip712Name ?? read!.name, version: eip712Version ?? read!.version, chainId, verifyingContract: endpoint.tokenAddress };
  }

  domainSeparator(chainId: number): Promise<Uint8Array> {
    let separator = this.separators.get(chainId);
    if (!separator) {
      separator = this.tokenDomain(chainId).then(domainSeparator);
      // a failed read is not cached: the next request tries the chain again
      separator.catch(() => this.separators.delete(chainId));
      this.separators.set(chainId, separator);
    }
    return separator;
  }

  /** Called on every verify (through the hot path's lean client). */
  isAuthorizationUsed(chainId: number, payer: string, nonce: string): Promise<boolean> {
    return this.endpoint(chainId).token.isAuthorizationUsed(payer, nonce);
  }

  /**
   * ERC-1271 for a deployed wallet; ERC-6492 for one its factory has not deployed yet: an eth_call deploys it
   * inside the simulation and asks it as the token will, so nothing is deployed by verifying.
   */
  async isValidContractSignature(chainId: number, signer: string, digest: Uint8Array, signature: string): Promise<ContractSignatureVerdict> {
    const endpoint = this.endpoint(chainId);
    const { provider } = endpoint;
    const wrapped = parseErc6492Signature(signature);
    const code = await provider.getCode(signer);
    if (code === '0x') {
      if (!wrapped) return undefined;
      if (!(endpoint.walletFactories ?? []).includes(wrapped.factory)) {
        return { refused: `ERC-6492 factory ${wrapped.factory} is not on this network's allowlist (WALLET_FACTORIES_${chainId})` };
      }
      const verdict = counterfactualVerdict(await provider.call(counterfactualCheckCall(signer, bytesToHex(digest), wrapped)));
      if (verdict === 'accepted') return true;
      if (verdict === 'not_deployed') return { refused: 'the ERC-6492 factory call does not deploy a wallet at authorization.from' };
      return { refused: 'the payer wallet (ERC-6492, once deployed) rejected the signature' };
    }
    // a wallet deployed since it signed: ERC-6492 says its inner signature is what it checks
    const walletSignature = wrapped?.innerSignature ?? signature;
    try {
      const result = await provider.call({ to: signer, data: erc1271.encodeFunctionData('isValidSignature', [bytesToHex(digest), walletSignature]) });
      return result.slice(0, 10).toLowerCase() === ERC1271_MAGIC;
    } catch (err) {
      // a wallet that reverts has refused the signature; anything else means the node could not be asked
      if ((err as { code?: string }).code === 'CALL_EXCEPTION') return false;
      throw err;
    }
  }
}
