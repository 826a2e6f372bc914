import { mostExtraGas } from '@facilitator/payment-mechanisms';
import type { ExecutorItem } from '@facilitator/evm-executor';
import type { SettlementStore } from '@facilitator/db';
import { directCallOf } from '../payment';
import type { SettlementNetwork, SettlementWithVerification } from '../step';
import { executorCallOf } from './executor-item';

export interface StoredItemCheckOptions {
  settlements: Pick<SettlementStore, 'findWithVerification'>;
  networks: ReadonlyMap<number, SettlementNetwork>;
  /** lowercase */
  treasury: string;
}

/**
 * Why an item read back from a stored batch is not the one this worker builds for its settlement (undefined
 * when it is): its payer, merchant, amount and nonce are the settlement's, its call is the settlement's payment
 * as `executorItemOf` makes it (with or without the payer's approval permit: which one was read from the chain
 * when the batch was formed), and its gas is within this worker's caps. A database writer can store any batch
 * row; only items every key holder would have built themselves are signed (issue 40).
 */
export function storedItemCheck(options: StoredItemCheckOptions) {
  return async (settlementId: string, chainId: number, item: ExecutorItem): Promise<string | undefined> => {
    const settlement = await options.settlements.findWithVerification(settlementId);
    if (!settlement) return `its settlement ${settlementId} does not exist`;
    const network = options.networks.get(chainId);
    if (settlement.chainId !== chainId || !network) return `its settlement ${settlementId} is not on chain ${chainId}`;
    const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
    if (!same(item.payer, settlement.payer) || !same(item.merchant, settlement.merchant) || !same(item.nonce, settlement.nonce) || item.amount !== BigInt(settlement.amount)) {
      return `its payer, merchant, amount or nonce is not settlement ${settlementId}'s`;
    }
    const calls = [false, true].map((withPermit) => callOf(settlement, network, options.treasury, withPermit));
    // the most any mechanism's call may add (an approval permit's gas): what the worker could have given it
    if (!calls.some((call) => call && same(call.to, item.target) && same(call.data, item.data))) return `its call is not settlement ${settlementId}'s payment`;
    const { fee, transfer, contractTransfer } = network.gasCaps;
    const maxGas = fee + (transfer > contractTransfer ? transfer : contractTransfer) + mostExtraGas();
    if (item.gas > maxGas) return `its gas ${item.gas} is above this worker's caps (${maxGas})`;
    return undefined;
  };
}

function callOf(settlement: SettlementWithVerification, network: SettlementNetwork, treasury: string, withPermit: boolean) {
  try {
    return executorCallOf(directCallOf(settlement, network.usdc, withPermit), { chainId: network.chainId, tokenAddress: network.usdc.tokenAddress.toLowerCase() }, treasury);
  } catch {
    // a payment without a permit, or one its mechanism no longer reads: no call of that kind
    return undefined;
  }
}
