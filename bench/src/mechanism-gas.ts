// Gas per settlement of each payment mechanism on one settlement path, for bench:gas: `exact` by EIP-3009,
// `exact` through Permit2 (x402's exact proxy) and `upto` through Permit2 (x402's upto proxy, the merchant
// settling part of the signed maximum), each paid by @x402/evm's own client schemes (x402Client's
// createPaymentPayload, as @x402/fetch pays) and sent as the x402 middleware sends it: POST /x402/verify,
// then POST /x402/settle, one payment at a time (each settle answers once its settlement is final, so no
// two share a transaction). Gas is the `gasUsed` of the receipts of every transaction of each settlement
// (its fee and payment transactions, or its share of the executor's `settle`).
import { getAddress, MaxUint256, Wallet } from 'ethers';
import { x402Client } from '@x402/core/client';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme as UptoEvmClientScheme } from '@x402/evm/upto/client';
import { privateKeyToAccount } from 'viem/accounts';
import type { Devnet } from '@facilitator/evm-devnet';
import { PERMIT2_ADDRESS } from '@facilitator/payment-mechanisms';
import type { Facilitator } from './facilitator-stack';
import { gasPerPayment } from './paid-request-bench';
import { log } from './results';
import { epochMs } from './stats';
import { merchantSettleKey, PAID_PRICE_UNITS, uptoSettledUnits, type PaidSample } from './x402-buyer';

export type MechanismName = 'exact-eip3009' | 'exact-permit2' | 'upto-permit2';
export const MECHANISMS: MechanismName[] = ['exact-eip3009', 'exact-permit2', 'upto-permit2'];
export const MECHANISM_LABELS: Record<MechanismName, string> = {
  'exact-eip3009': 'exact, EIP-3009 (`transferWithAuthorization`)',
  'exact-permit2': 'exact through Permit2 (x402 exact proxy)',
  'upto-permit2': 'upto through Permit2 (x402 upto proxy)',
};

export interface MechanismGasResult {
  mechanism: MechanismName;
  path: 'atomic' | 'sequential';
  /** what the payer signed (the maximum, for upto) and what was settled, in token units */
  signedUnits: string;
  settledUnits: string;
  requests: number;
  /** answered success by /x402/settle */
  settled: number;
  firstError?: string;
  /** mean gasUsed per settled payment: fee and payment, or the share of the executor's `settle` */
  gasPerSettlement: number | null;
  byPurpose: Record<string, number>;
}

/** The devnet payer approves Permit2 on the token once, as a Permit2 payer does. */
export async function approvePermit2Once(devnet: Devnet): Promise<void> {
  await devnet.setEthBalance(devnet.accounts.payer.address, 10n ** 17n);
  const payer = new Wallet(devnet.accounts.payer.privateKey, devnet.provider);
  const token = devnet.usdc.connect(payer) as unknown as { approve(spender: string, value: bigint): Promise<{ wait(): Promise<unknown> }> };
  await (await token.approve(PERMIT2_ADDRESS, MaxUint256)).wait();
}

/** USDC the payer spends for `count` payments of every mechanism, and the fees charged, on one path. */
export const mechanismSpend = (count: number) => ({ payer: BigInt(count) * (2n * PAID_PRICE_UNITS + uptoSettledUnits()), fees: 3 * count });

/** The requirements a merchant's x402 middleware would offer for `mechanism`, with the facilitator's upto address. */
function requirementsOf(devnet: Devnet, mechanism: MechanismName, facilitatorAddress: string): PaymentRequirements {
  const extra: Record<string, unknown> = { name: devnet.eip712Domain.name, version: devnet.eip712Domain.version };
  if (mechanism === 'exact-permit2') extra.assetTransferMethod = 'permit2';
  if (mechanism === 'upto-permit2') extra.facilitatorAddress = facilitatorAddress;
  return {
    scheme: mechanism === 'upto-permit2' ? 'upto' : 'exact',
    network: `eip155:${devnet.chainId}`,
    amount: PAID_PRICE_UNITS.toString(),
    asset: getAddress(devnet.token),
    payTo: getAddress(devnet.accounts.merchant.address),
    maxTimeoutSeconds: 300,
    extra,
  };
}

const post = async (url: string, body: unknown, settleKey?: string) => {
  const headers = { 'content-type': 'application/json', ...(settleKey ? { authorization: `Bearer ${settleKey}` } : {}) };
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/** `count` payments of each mechanism through `f`, one at a time; gas per settlement from the receipts. */
export async function mechanismGas(f: Facilitator, devnet: Devnet, count: number): Promise<MechanismGasResult[]> {
  const account = privateKeyToAccount(devnet.accounts.payer.privateKey as `0x${string}`);
  const client = new x402Client()
    .register('eip155:*', new ExactEvmClientScheme(account))
    .register('eip155:*', new UptoEvmClientScheme(account))
    .setSpendControls({ allowedAssets: [{ network: `eip155:${devnet.chainId}`, asset: getAddress(devnet.token), maxAmountPerPayment: PAID_PRICE_UNITS.toString() }] });
  const results: MechanismGasResult[] = [];
  // upto settles part of its maximum, which only the merchant may name: by its settle key
  const settleKey = await merchantSettleKey(devnet, f.api.url);
  for (const mechanism of MECHANISMS) {
    log(`${f.mode}: ${count} ${mechanism} payments, one at a time, through /x402/settle`);
    const requirements = requirementsOf(devnet, mechanism, devnet.accounts.treasury.address);
    const settledUnits = mechanism === 'upto-permit2' ? uptoSettledUnits() : PAID_PRICE_UNITS;
    const samples: PaidSample[] = [];
    let firstError: string | undefined;
    for (let i = 0; i < count; i++) {
      const paymentPayload = await client.createPaymentPayload({ x402Version: 2, resource: { url: 'http://merchant.invalid/resource' }, accepts: [requirements] });
      const auth = paymentPayload.payload as { authorization?: { nonce: string }; permit2Authorization?: { nonce: string } };
      const nonce = auth.permit2Authorization ? '0x' + BigInt(auth.permit2Authorization.nonce).toString(16).padStart(64, '0') : auth.authorization!.nonce.toLowerCase();
      const startedAt = epochMs();
      const verify = await post(`${f.api.url}/x402/verify`, { x402Version: 2, paymentPayload, paymentRequirements: requirements });
      // the merchant settles what was used: for upto, part of the maximum the payer signed and verify checked
      const settle =
        verify.body.isValid === true
          ? await post(`${f.api.url}/x402/settle`, { x402Version: 2, paymentPayload, paymentRequirements: { ...requirements, amount: settledUnits.toString() } }, settleKey)
          : verify;
      const ok = settle.status === 200 && settle.body.success === true;
      if (!ok) firstError ??= `${settle.status}: ${JSON.stringify(settle.body).slice(0, 300)}`;
      samples.push({ startedAt, endedAt: epochMs(), ok, nonce });
    }
    const gas = await gasPerPayment(devnet, { ours: f }, samples);
    results.push({
      mechanism,
      path: f.mode,
      signedUnits: PAID_PRICE_UNITS.toString(),
      settledUnits: settledUnits.toString(),
      requests: count,
      settled: samples.filter((s) => s.ok).length,
      ...(firstError ? { firstError } : {}),
      gasPerSettlement: gas?.total ?? null,
      byPurpose: gas?.byPurpose ?? {},
    });
  }
  return results;
}
