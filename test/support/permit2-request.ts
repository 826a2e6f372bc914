// A payer's `exact` payment through Permit2 as @x402/evm 2.27's client makes it (createPermit2Payload): a
// PermitWitnessTransferFrom for x402's exact proxy under Permit2's domain, in the standard x402 v2
// facilitator request, and the payer's one-time approval of Permit2 on the token.
import { randomBytes } from 'node:crypto';
import { MaxUint256, Wallet } from 'ethers';
import { permit2WitnessTypes, uptoPermit2WitnessTypes } from '@x402/evm';
import type { Devnet } from '@facilitator/evm-devnet';
import { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY } from '@facilitator/payment-mechanisms';
import { signPermit2 } from '@facilitator/payment-mechanisms/testing';


export interface Permit2Fields {
  payerKey: string;
  to: string;
  value: bigint;
  /** decimal, as the client's random 256-bit nonce */
  nonce?: string;
  deadline?: bigint;
  validAfter?: bigint;
  spender?: string;
  token?: string;
  /** a contract wallet's address as the payer, with `signature` as its (ERC-1271) signature: nothing is signed by the key */
  from?: string;
  signature?: string;
}

/** The x402 v2 verify/settle request of a Permit2 payment, signed by `payerKey`. */
export async function permit2Request(devnet: Devnet, fields: Permit2Fields, requirements: { payTo?: string; amount?: bigint } = {}) {
  const payer = new Wallet(fields.payerKey);
  const token = fields.token ?? devnet.token;
  const permit2Authorization = {
    from: fields.from ?? payer.address,
    permitted: { token, amount: fields.value.toString() },
    spender: fields.spender ?? X402_EXACT_PERMIT2_PROXY,
    nonce: fields.nonce ?? BigInt('0x' + randomBytes(32).toString('hex')).toString(),
    deadline: (fields.deadline ?? BigInt(Math.floor(Date.now() / 1000) + 300)).toString(),
    witness: { to: fields.to, validAfter: (fields.validAfter ?? 0n).toString() },
  };
  const signature = fields.signature ?? (await signPermit2(payer, devnet.chainId, permit2WitnessTypes, permit2Authorization));
  const accepted = {
    scheme: 'exact',
    network: `eip155:${devnet.chainId}`,
    amount: (requirements.amount ?? fields.value).toString(),
    asset: devnet.token,
    payTo: requirements.payTo ?? fields.to,
    maxTimeoutSeconds: 300,
    extra: { assetTransferMethod: 'permit2', name: 'USDC', version: '2' },
  };
  return {
    x402Version: 2,
    paymentPayload: { x402Version: 2, accepted, payload: { permit2Authorization, signature } },
    paymentRequirements: accepted,
  };
}

/**
 * The x402 v2 verify/settle request of an `upto` payment as @x402/evm's upto client makes it: a permit of the
 * maximum `value` for x402's upto proxy, whose witness names `facilitator` (by default the treasury, as our
 * /x402/supported advertises it); `settle` is the amount the merchant settles (the requirements' amount; by
 * default the maximum, as at verify).
 */
export async function uptoRequest(devnet: Devnet, fields: Permit2Fields & { facilitator?: string }, settle?: bigint) {
  const payer = new Wallet(fields.payerKey);
  const permit2Authorization = {
    from: fields.from ?? payer.address,
    permitted: { token: fields.token ?? devnet.token, amount: fields.value.toString() },
    spender: fields.spender ?? X402_UPTO_PERMIT2_PROXY,
    nonce: fields.nonce ?? BigInt('0x' + randomBytes(32).toString('hex')).toString(),
    deadline: (fields.deadline ?? BigInt(Math.floor(Date.now() / 1000) + 300)).toString(),
    witness: { to: fields.to, facilitator: fields.facilitator ?? devnet.accounts.treasury.address, validAfter: (fields.validAfter ?? 0n).toString() },
  };
  const signature =
    fields.signature ?? (await signPermit2(payer, devnet.chainId, uptoPermit2WitnessTypes, permit2Authorization));
  const accepted = {
    scheme: 'upto',
    network: `eip155:${devnet.chainId}`,
    amount: fields.value.toString(),
    asset: devnet.token,
    payTo: fields.to,
    maxTimeoutSeconds: 300,
    extra: { assetTransferMethod: 'permit2', name: 'USDC', version: '2', facilitatorAddress: permit2Authorization.witness.facilitator },
  };
  return {
    x402Version: 2,
    paymentPayload: { x402Version: 2, accepted, payload: { permit2Authorization, signature } },
    paymentRequirements: { ...accepted, amount: (settle ?? fields.value).toString() },
  };
}

/** The payer approves Permit2 for `amount` of the token (funded with a little ETH for it: x402 payers hold none). */
export async function approvePermit2(devnet: Devnet, payerKey: string, amount: bigint = MaxUint256): Promise<void> {
  const payer = new Wallet(payerKey, devnet.provider);
  await devnet.setEthBalance(payer.address, 10n ** 16n);
  const token = devnet.usdc.connect(payer) as unknown as { approve(spender: string, value: bigint): Promise<{ wait(): Promise<unknown> }> };
  await (await token.approve(PERMIT2_ADDRESS, amount)).wait();
}
