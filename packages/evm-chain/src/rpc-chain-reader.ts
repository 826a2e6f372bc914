import { Interface, JsonRpcProvider, toQuantity } from 'ethers';
import { bytesToHex } from '@facilitator/core';
import { untrustedCall, UntrustedCallTimeoutError } from './rpc/untrusted-call';
import type { RpcCaller } from './rpc/rpc-endpoint-pool';
import { JsonRpcError } from './json-rpc-batch-client';
import { classifyNodeError } from './node-error-classification';
import { counterfactualCheckCall, counterfactualVerdict } from './erc6492/erc6492-check';
import { parseErc6492Signature } from './erc6492/erc6492-signature';
import { UsdcClient } from './usdc-client';
import { addressWord, decodeUint, encodeCall, SELECTORS } from './token-calldata';

interface ChainEndpoint {
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
  /**
   * The gas ceilings that bound a payer's code when verification runs it (GAS_CAP_CONTRACT_TRANSFER_<id>,
   * GAS_CAP_WALLET_DEPLOY_<id>; DEFAULT_UNTRUSTED_GAS when absent): a wallet whose ERC-1271 check needs more
   * than the whole transfer may burn could never be settled, so asking it longer is work for nobody.
   */
  gasCaps?: { contractTransfer: bigint; walletDeploy: bigint };
  /** how long a call of a payer's code may take before the payment is refused as unverifiable (default: the client's timeout) */
  untrustedCallTimeoutMs?: number;
}

/** The defaults of GAS_CAP_CONTRACT_TRANSFER_<id> and GAS_CAP_WALLET_DEPLOY_<id> (packages/config). */
const DEFAULT_UNTRUSTED_GAS = { contractTransfer: 300_000n, walletDeploy: 500_000n } as const;

/** EIP-7702: an EOA delegated to a contract has the code 0xef0100 ++ address (23 bytes). */
const DELEGATION_PREFIX = '0xef0100';

/** A contract wallet's answer: accepted, refused (with why), or undefined when the signer is an ordinary key. */
type ContractSignatureVerdict = boolean | { refused: string } | undefined;

const erc1271 = new Interface(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)']);
/** what USDC's SignatureChecker compares the first word of the answer with: bytes32(bytes4(0x1626ba7e)) */
const ERC1271_MAGIC_WORD = '0x1626ba7e' + '0'.repeat(56);

/**
 * Read-only chain access for verification. The EIP-712 domain is pinned per network, never taken from
 * a request: read once from the token (or configuration) and kept for the life of the process.
 */
export class RpcChainReader {
  private readonly endpoints = new Map<number, ChainEndpoint & { token: UsdcClient }>();

  constructor(endpoints: readonly ChainEndpoint[]) {
    // the token is read through UsdcClient, on the hot path's lean client
    for (const endpoint of endpoints) this.endpoints.set(endpoint.chainId, { ...endpoint, token: new UsdcClient(endpoint.provider, endpoint.tokenAddress, endpoint.rpc) });
  }

  private endpoint(chainId: number): ChainEndpoint & { token: UsdcClient } {
    const endpoint = this.endpoints.get(chainId);
    if (!endpoint) throw new Error(`network ${chainId} is not enabled`);
    return endpoint;
  }

  /** The token's EIP-712 domain, pinned or read from the token (UsdcClient.eip712Domain). */
  async tokenDomain(chainId: number): Promise<{ name: string; version: string; chainId: number; verifyingContract: string }> {
    const { token, eip712Name, eip712Version } = this.endpoint(chainId);
    return token.eip712Domain(chainId, { name: eip712Name, version: eip712Version });
  }

  /** Its domain separator, read once (UsdcClient.domainSeparator, which the worker uses too). */
  async domainSeparator(chainId: number): Promise<Uint8Array> {
    const { token, eip712Name, eip712Version } = this.endpoint(chainId);
    return token.domainSeparator(chainId, { name: eip712Name, version: eip712Version });
  }

  /** A contract's read, through the hot path's lean client (Permit2's nonce bitmap, the payer's approval of it). */
  readContract(chainId: number, to: string, data: string): Promise<string> {
    return this.endpoint(chainId).token.readContract(to, data);
  }

  /** An ERC-20 balance (through the hot path's lean client: the settle intake's reads of one turn go as one batch). */
  async balanceOf(chainId: number, token: string, owner: string): Promise<bigint> {
    return decodeUint(await this.readContract(chainId, token, encodeCall(SELECTORS.balanceOf, [addressWord(owner)])));
  }

  /** An ERC-20 allowance (the lean client, as balanceOf). */
  async allowance(chainId: number, token: string, owner: string, spender: string): Promise<bigint> {
    return decodeUint(await this.readContract(chainId, token, encodeCall(SELECTORS.allowance, [addressWord(owner), addressWord(spender)])));
  }

  /** Called on every verify (through the hot path's lean client). */
  isAuthorizationUsed(chainId: number, payer: string, nonce: string): Promise<boolean> {
    return this.endpoint(chainId).token.isAuthorizationUsed(payer, nonce);
  }

  /**
   * ERC-1271 for a deployed wallet (or an EOA delegated by EIP-7702: code 0xef0100…, which USDC's
   * SignatureChecker asks by ERC-1271 too, running the delegate's code); undefined for an account without
   * code (ECDSA decides, checkPayerSignature); ERC-6492 for one its factory has not deployed yet: an
   * eth_call deploys it inside the simulation and asks it as the token will, so nothing is deployed by verifying.
   *
   * Both run the payer's own code, so each call has a gas limit (the most the settlement could ever let it
   * burn) and goes alone, never in a batch and never held against the endpoint (untrustedCall). Whatever
   * the code does (reverts, runs out of gas, answers garbage or too slowly) is the payer's refusal, never a
   * 503: only an endpoint that cannot be reached at all is.
   */
  async isValidContractSignature(chainId: number, signer: string, digest: Uint8Array, signature: string): Promise<ContractSignatureVerdict> {
    const endpoint = this.endpoint(chainId);
    const gasCaps = endpoint.gasCaps ?? DEFAULT_UNTRUSTED_GAS;
    const wrapped = parseErc6492Signature(signature);
    const code = await endpoint.rpc.call<string>('eth_getCode', [signer, 'latest']);
    if (!isCode(code)) {
      if (!wrapped) return undefined;
      if (!(endpoint.walletFactories ?? []).includes(wrapped.factory)) {
        return { refused: `ERC-6492 factory ${wrapped.factory} is not on this network's allowlist (WALLET_FACTORIES_${chainId})` };
      }
      // deploying the wallet and then asking it: bounded by what a deployment and a transfer may each burn
      const gas = gasCaps.walletDeploy + gasCaps.contractTransfer;
      const answer = await this.callPayerCode(endpoint, { ...counterfactualCheckCall(signer, bytesToHex(digest), wrapped), gas: toQuantity(gas) });
      if (typeof answer !== 'string') return { refused: `the ERC-6492 check (deploying the payer wallet, then asking it, with ${gas} gas) ${answer.failed}` };
      const verdict = counterfactualVerdict(answer);
      if (verdict === 'accepted') return true;
      if (verdict === 'not_deployed') return { refused: 'the ERC-6492 factory call does not deploy a wallet at authorization.from' };
      return { refused: 'the payer wallet (ERC-6492, once deployed) rejected the signature' };
    }
    // a wallet deployed since it signed: ERC-6492 says its inner signature is what it checks
    const walletSignature = wrapped?.innerSignature ?? signature;
    const kind = code.toLowerCase().startsWith(DELEGATION_PREFIX) ? 'the payer account (an EOA delegated by EIP-7702)' : 'the payer contract';
    const data = erc1271.encodeFunctionData('isValidSignature', [bytesToHex(digest), walletSignature]);
    const answer = await this.callPayerCode(endpoint, { to: signer, data, gas: toQuantity(gasCaps.contractTransfer) });
    if (typeof answer !== 'string') return { refused: `${kind} (ERC-1271, asked with ${gasCaps.contractTransfer} gas) ${answer.failed}` };
    // USDC's own test: at least 32 bytes whose first word is exactly the magic value, left-aligned
    if (answer.length >= 66 && answer.slice(0, 66).toLowerCase() === ERC1271_MAGIC_WORD) return true;
    return { refused: `${kind} (ERC-1271) rejected the signature` };
  }

  /**
   * An eth_call of a payer's code: its answer, or how it failed when the failure is the code's doing (a
   * revert, out of gas, no answer in time). Only an endpoint that cannot run it at all throws (503).
   */
  private async callPayerCode(endpoint: ChainEndpoint, call: { to?: string; data: string; gas: string }): Promise<string | { failed: string }> {
    try {
      return await untrustedCall<string>(endpoint.rpc, 'eth_call', [call, 'latest'], endpoint.untrustedCallTimeoutMs);
    } catch (err) {
      if (err instanceof UntrustedCallTimeoutError) return { failed: `did not answer in ${err.timeoutMs} ms` };
      if (err instanceof JsonRpcError && classifyNodeError(err).category !== 'rpc_unavailable') return { failed: `failed (${err.message.slice(0, 200)})` };
      // an ethers provider's revert (a caller without the endpoint pool's raw answers)
      if ((err as { code?: string }).code === 'CALL_EXCEPTION') return { failed: 'reverted' };
      throw err;
    }
  }
}

function isCode(code: string): boolean {
  return code !== '0x' && code !== '0x0' && code !== '';
}
