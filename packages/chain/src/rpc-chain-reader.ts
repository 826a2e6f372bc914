import { Interface, JsonRpcProvider } from 'ethers';
import { bytesToHex, domainSeparator } from '@facilitator/core';
import { JsonRpcBatchClient } from './json-rpc-batch-client';
import { fiatTokenInterface } from './token-abi';

export interface ChainEndpoint {
  chainId: number;
  provider: JsonRpcProvider;
  /** the hot path's lean client (authorizationState on every verify); ethers serves the rest */
  rpc: JsonRpcBatchClient;
  tokenAddress: string;
  /** pinned by configuration; otherwise read from the token once */
  eip712Name?: string;
  eip712Version?: string;
}

const AUTHORIZATION_STATE_SELECTOR = fiatTokenInterface.getFunction('authorizationState')!.selector;
const erc1271 = new Interface(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)']);
const ERC1271_MAGIC = '0x1626ba7e';

/**
 * Read-only chain access for verification. The EIP-712 domain is pinned per network, never taken from
 * a request: read once from the token (or configuration) and kept for the life of the process.
 */
export class RpcChainReader {
  private readonly endpoints = new Map<number, ChainEndpoint>();
  private readonly separators = new Map<number, Promise<Uint8Array>>();

  constructor(endpoints: readonly ChainEndpoint[]) {
    for (const endpoint of endpoints) this.endpoints.set(endpoint.chainId, endpoint);
  }

  private endpoint(chainId: number): ChainEndpoint {
    const endpoint = this.endpoints.get(chainId);
    if (!endpoint) throw new Error(`network ${chainId} is not enabled`);
    return endpoint;
  }

  async tokenDomain(chainId: number): Promise<{ name: string; version: string; chainId: number; verifyingContract: string }> {
    const endpoint = this.endpoint(chainId);
    const read = async (fn: 'name' | 'version') => {
      const data = await endpoint.provider.call({ to: endpoint.tokenAddress, data: fiatTokenInterface.encodeFunctionData(fn) });
      return fiatTokenInterface.decodeFunctionResult(fn, data)[0] as string;
    };
    const [name, version] = await Promise.all([endpoint.eip712Name ?? read('name'), endpoint.eip712Version ?? read('version')]);
    return { name, version, chainId, verifyingContract: endpoint.tokenAddress };
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

  /** Called on every verify, so the calldata is written by hand: selector, address word, nonce word. */
  async isAuthorizationUsed(chainId: number, payer: string, nonce: string): Promise<boolean> {
    const endpoint = this.endpoint(chainId);
    const data = AUTHORIZATION_STATE_SELECTOR + payer.slice(2).toLowerCase().padStart(64, '0') + nonce.slice(2).toLowerCase();
    const result = await endpoint.rpc.call<string>('eth_call', [{ to: endpoint.tokenAddress, data }, 'latest']);
    return BigInt(result) !== 0n;
  }

  async isValidContractSignature(chainId: number, signer: string, digest: Uint8Array, signature: string): Promise<boolean | undefined> {
    const { provider } = this.endpoint(chainId);
    const code = await provider.getCode(signer);
    if (code === '0x') return undefined;
    try {
      const result = await provider.call({ to: signer, data: erc1271.encodeFunctionData('isValidSignature', [bytesToHex(digest), signature]) });
      return result.slice(0, 10).toLowerCase() === ERC1271_MAGIC;
    } catch (err) {
      // a wallet that reverts has refused the signature; anything else means the node could not be asked
      if ((err as { code?: string }).code === 'CALL_EXCEPTION') return false;
      throw err;
    }
  }
}
