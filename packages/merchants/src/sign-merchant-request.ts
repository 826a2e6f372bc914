import { randomBytes } from 'node:crypto';
import type { TypedDataDomain, TypedDataField } from 'ethers';
import { merchantRequestDomain, merchantRequestMessage, MERCHANT_REQUEST_TYPES, type MerchantAction } from './merchant-request';

/** Anything that signs EIP-712 typed data: an ethers Wallet, a Safe owner's wallet, a hardware signer. */
interface TypedDataSigner {
  signTypedData(domain: TypedDataDomain, types: Record<string, TypedDataField[]>, value: Record<string, unknown>): Promise<string>;
}

/** The `proof` of a merchant request body, as the API expects it. */
interface MerchantProof {
  network: string;
  nonce: string;
  expires_at: number;
  signature: string;
}

export interface ProofRequest {
  action: MerchantAction;
  merchant: string;
  parameters?: Record<string, unknown>;
  /** the deployment's identity network (its EIP-712 domain chain) */
  network: { caip2: string; chainId: number };
  /** the deployment's treasury: the signature is good at that deployment only */
  treasury: string;
  /** default 120 s; the API accepts at most 600 */
  lifetimeSeconds?: number;
  /** for contract merchants: turns the EIP-712 digest's fields into the wallet's own signature (e.g. a Safe's) */
  sign?: (fields: { domain: TypedDataDomain; message: Record<string, unknown> }) => Promise<string>;
}

/** Signs a merchant request for the merchant endpoints (`/v1/merchants/{address}/…`) — the client side. */
export async function signMerchantRequest(signer: TypedDataSigner | undefined, request: ProofRequest): Promise<MerchantProof> {
  const nonce = `0x${randomBytes(32).toString('hex')}`;
  const expiresAt = Math.floor(Date.now() / 1000) + (request.lifetimeSeconds ?? 120);
  const domain = merchantRequestDomain({ chainId: request.network.chainId, treasury: request.treasury });
  const message = merchantRequestMessage({
    action: request.action,
    merchant: request.merchant,
    parameters: request.parameters ?? {},
    nonce,
    expiresAt,
    chainId: request.network.chainId,
    treasury: request.treasury,
  });
  const signature = request.sign ? await request.sign({ domain, message }) : await signer!.signTypedData(domain, MERCHANT_REQUEST_TYPES, message);
  return { network: request.network.caip2, nonce, expires_at: expiresAt, signature };
}

/** What `GET /v1/merchants/request-domain` answers: the deployment's EIP-712 domain for merchant requests. */
export interface PublishedMerchantRequestDomain {
  network: string;
  domain: { name: string; version: string; chainId: number; verifyingContract: string };
}

/** The API path that publishes a deployment's merchant-request domain. */
export const MERCHANT_REQUEST_DOMAIN_PATH = '/v1/merchants/request-domain';

/** What to sign for, from the deployment's published domain (the client signs for the API it talks to). */
export function signingTargetOf(published: PublishedMerchantRequestDomain): Pick<ProofRequest, 'network' | 'treasury'> {
  return { network: { caip2: published.network, chainId: Number(published.domain.chainId) }, treasury: published.domain.verifyingContract };
}
