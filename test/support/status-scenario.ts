// Settlements of every kind the status page reports, made for real on a test stack (worker running, and
// MAX_FEE_PER_GAS_GWEI_84532 low enough that a raised base fee is above it): settled, failed, and waiting.
import { parseUnits } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceStatus } from '@facilitator/schemas';
import { newMerchant } from './chain-actions';
import type { TestStack } from './test-stack';

export const STATUS_GAS_CAP_GWEI = '2';
/** the worker's fee reading cache (sending-options.ts feeCacheMs) */
const WORKER_FEE_CACHE_MS = 500;

/** The next block's base fee, mined at once: what the worker's gas check and the status page read. */
export async function setBaseFeeGwei(stack: TestStack, gwei: string): Promise<void> {
  await stack.devnet.provider.send('anvil_setNextBlockBaseFeePerGas', [`0x${parseUnits(gwei, 'gwei').toString(16)}`]);
  await stack.devnet.provider.send('evm_mine', []);
}

async function settleFormA(stack: TestStack, payTo?: string): Promise<number> {
  const p = await stack.payment(payTo ? { to: payTo } : {});
  const body = p.formA(payTo ? { payTo } : {});
  const verified = await stack.http.post('/v1/verify').send(body);
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}`);
  return (await stack.http.post('/v1/settle').send(body)).status;
}

/** Two settled, one failed (a merchant without allowance, Form B), then one left waiting for gas; returns the waiting one's id. */
export async function settleEveryKind(stack: TestStack): Promise<string> {
  if ((await settleFormA(stack)) !== 200 || (await settleFormA(stack)) !== 200) throw new Error('a settlement did not settle');
  // Form B: a settlement is stored and then fails at the worker's allowance check (Form A and x402 refuse a
  // payment whose merchant has no allowance before storing anything: there would be no failed settlement)
  const broke = await newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 0n });
  const fv = await stack.http.post('/v1/verify').send((await stack.payment({ to: broke.address })).formB({ seller_address: broke.address }));
  const fs = await stack.http.post('/v1/settle').send({ verification_id: fv.body.verification_id, destination_address: broke.address });
  for (let failed = false, deadline = Date.now() + 20_000; !failed; await sleep(100)) {
    failed = (await stack.http.get(`/v1/settlements/${fs.body.settlement_id}`)).body.status === 'failed';
    if (!failed && Date.now() > deadline) throw new Error('the settlement without allowance did not fail');
  }
  await setBaseFeeGwei(stack, '10');
  // the worker's last fee reading (of the settlements above) is trusted for feeCacheMs (500 ms): only a
  // reading after the raise makes the next settlement wait instead of sending under the new base fee
  await sleep(WORKER_FEE_CACHE_MS + 200);
  const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
  const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  const id = s.body.settlement_id as string;
  let record: { waiting?: { reason?: string } } = {};
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(100)) {
    record = (await stack.http.get(`/v1/settlements/${id}`)).body;
    if (record.waiting?.reason === 'gas_price_above_cap') return id;
  }
  throw new Error(`settlement ${id} never waited for gas: ${JSON.stringify(record)}`);
}

/** /status.json, polled until `done` holds (the figures are recomputed every STATUS_MAX_AGE_MS). */
export async function statusUntil(stack: TestStack, done: (status: ServiceStatus) => boolean, timeoutMs = 20_000): Promise<ServiceStatus> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
    const status = (await stack.http.get('/status.json')).body as ServiceStatus;
    if (done(status)) return status;
    if (Date.now() > deadline) throw new Error(`status never matched; last: ${JSON.stringify(status)}`);
  }
}

/** percentile_cont, as Postgres computes it: linear interpolation between the closest ranks. */
export function percentileCont(values: number[], fraction: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = fraction * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}
