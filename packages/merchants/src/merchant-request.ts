import { getAddress, getBytes, hexlify, recoverAddress, Signature, TypedDataEncoder, type Provider } from 'ethers';
import { canonicalJson } from '@facilitator/core';

/** The actions a merchant signs for; the name is part of the signed data, so a signature means one thing. */
export const MerchantAction = {
  GetWebhookSecret: 'webhook_secret.get',
  RotateWebhookSecret: 'webhook_secret.rotate',
  EnableSettleProtection: 'settle_key.create',
  DisableSettleProtection: 'settle_key.revoke',
  SetMinimum: 'minimum.set',
  /** sign in to the merchant page: answered with a short-lived session for reads (merchant-sessions.ts) */
  CreateSession: 'session.create',
} as const;
export type MerchantAction = (typeof MerchantAction)[keyof typeof MerchantAction];

/** A signed request may live at most this long: short, so a leaked one soon stops mattering. */
export const MAX_REQUEST_LIFETIME_SECONDS = 600;

export const MERCHANT_REQUEST_TYPES = {
  MerchantRequest: [
    { name: 'action', type: 'string' },
    { name: 'merchant', type: 'address' },
    { name: 'parameters', type: 'string' },
    { name: 'nonce', type: 'bytes32' },
    { name: 'expiresAt', type: 'uint256' },
  ],
};

/**
 * What binds a signed merchant request to one deployment of the service: its treasury (the EIP-712 domain's
 * `verifyingContract`) and the one chain on which its contract merchants prove control (`chainId`; ERC-1271
 * is asked there and nowhere else). A request signed for another deployment, or for another chain, has
 * another digest and is refused. Clients read it from `GET /v1/merchants/request-domain`.
 */
export interface MerchantRequestBinding {
  chainId: number;
  treasury: string;
}

/** Version 2: version 1 had no treasury, so its signatures were good at any deployment. */
const MERCHANT_REQUEST_DOMAIN_VERSION = '2';

export function merchantRequestDomain(binding: MerchantRequestBinding) {
  return { name: 'x402 Facilitator', version: MERCHANT_REQUEST_DOMAIN_VERSION, chainId: binding.chainId, verifyingContract: getAddress(binding.treasury) };
}

/**
 * The chain on which a deployment's contract merchants prove control, fixed by the deployment (never the
 * requester's pick): Base mainnet when enabled, else the lowest enabled chain id.
 */
export function merchantIdentityChainId(enabledChainIds: readonly number[]): number {
  if (enabledChainIds.length === 0) throw new Error('no network is enabled');
  return enabledChainIds.includes(8453) ? 8453 : Math.min(...enabledChainIds);
}

/** A deployment's binding, from its enabled networks and its treasury: the API and the worker derive it alike. */
export function deploymentBinding(enabledChainIds: readonly number[], treasury: string): MerchantRequestBinding {
  return { chainId: merchantIdentityChainId(enabledChainIds), treasury };
}

interface MerchantRequestFields {
  action: MerchantAction;
  /** the payTo address whose control is proven */
  merchant: string;
  /** the action's own parameters (e.g. `{ minimum: "0" }`), signed as canonical JSON */
  parameters: Record<string, unknown>;
  /** 32 random bytes, 0x hex: each signed request is accepted once */
  nonce: string;
  /** Unix seconds */
  expiresAt: number;
  /** the deployment's identity chain (EIP-712 domain) */
  chainId: number;
  /** the deployment's treasury (EIP-712 domain `verifyingContract`) */
  treasury: string;
}

export function merchantRequestMessage(fields: MerchantRequestFields) {
  return {
    action: fields.action,
    merchant: fields.merchant,
    parameters: canonicalJson(fields.parameters),
    nonce: fields.nonce,
    expiresAt: BigInt(fields.expiresAt),
  };
}

/** The EIP-712 digest a merchant signs (and a contract wallet's isValidSignature is asked about). */
export function merchantRequestDigest(fields: MerchantRequestFields): string {
  return TypedDataEncoder.hash(merchantRequestDomain(fields), MERCHANT_REQUEST_TYPES, merchantRequestMessage(fields));
}

const ERC1271_MAGIC = '0x1626ba7e';

/**
 * Is `signature` the merchant's over the request? An EOA's ECDSA signature is recovered locally;
 * otherwise, when the merchant address holds code, its ERC-1271 `isValidSignature(digest, signature)`
 * decides (a Safe, a smart wallet), read through `provider` on the request's chain.
 */
export async function isMerchantSignature(fields: MerchantRequestFields, signature: string, provider: Provider | undefined): Promise<boolean> {
  const digest = merchantRequestDigest(fields);
  const merchant = fields.merchant.toLowerCase();
  if (getBytes(signature).length === 65) {
    try {
      const sig = Signature.from(signature);
      if (recoverAddress(digest, sig).toLowerCase() === merchant) return true;
    } catch {
      // not a recoverable ECDSA signature: it may still be a contract wallet's
    }
  }
  if (!provider) return false;
  const code = await provider.getCode(merchant);
  if (code === '0x') return false;
  const data = encodeIsValidSignature(digest, signature);
  try {
    const answer = await provider.call({ to: merchant, data });
    return answer.slice(0, 10).toLowerCase() === ERC1271_MAGIC;
  } catch {
    // a revert means "not valid" (a Safe reverts on a wrong signature)
    return false;
  }
}

/** isValidSignature(bytes32,bytes) calldata, encoded by hand (one static word and one dynamic bytes). */
function encodeIsValidSignature(digest: string, signature: string): string {
  const bytes = getBytes(signature);
  const padded = Math.ceil(bytes.length / 32) * 32;
  const body = new Uint8Array(padded);
  body.set(bytes);
  const word = (n: number) => n.toString(16).padStart(64, '0');
  return `${ERC1271_MAGIC}${digest.slice(2)}${word(64)}${word(bytes.length)}${hexlify(body).slice(2)}`;
}
