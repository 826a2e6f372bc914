import { Wallet, hexlify, randomBytes } from 'ethers';
import { type Eip712Domain, type TransferAuthorization } from '@facilitator/core';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '@facilitator/payment-mechanisms';

export interface AuthorizationFields {
  to: string;
  value: bigint;
  /** Default 0: valid at once. */
  validAfter?: bigint;
  /** Default an hour from now (wall clock, which anvil's block timestamps follow). */
  validBefore?: bigint;
  /** 32 bytes, 0x hex; default random. */
  nonce?: string;
}

export interface SignedAuthorization {
  authorization: TransferAuthorization;
  /** 65 bytes r ‖ s ‖ v, 0x hex, v 27 or 28: what an x402 client sends. */
  signature: string;
}

const DEFAULT_VALIDITY_SECONDS = 3_600n;

/** Signs an EIP-3009 TransferWithAuthorization the way an x402 client does, with ethers' generic EIP-712 signer. */
export async function signTransferAuthorization(
  payerKey: string,
  domain: Eip712Domain,
  fields: AuthorizationFields,
): Promise<SignedAuthorization> {
  const payer = new Wallet(payerKey);
  const authorization: TransferAuthorization = {
    from: payer.address,
    to: fields.to,
    value: fields.value,
    validAfter: fields.validAfter ?? 0n,
    validBefore: fields.validBefore ?? BigInt(Math.floor(Date.now() / 1000)) + DEFAULT_VALIDITY_SECONDS,
    nonce: fields.nonce ?? hexlify(randomBytes(32)),
  };
  const signature = await payer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, authorization);
  return { authorization, signature };
}
