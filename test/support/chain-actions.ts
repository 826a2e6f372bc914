// Things a payer or merchant does on chain by themselves, outside the facilitator, and what tests read
// back from the chain to check the facilitator's work.
import { id as topicOf, Signature, Wallet, zeroPadValue } from 'ethers';
import type { Devnet } from '@facilitator/evm-devnet';

const CANCEL_TYPES = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
};

/** The payer cancels an authorization (EIP-3009 cancelAuthorization), submitted by the deployer who has ETH. */
export async function cancelAuthorization(devnet: Devnet, payerKey: string, nonce: string, opts: { wait?: boolean; overrides?: object } = {}): Promise<string> {
  const payer = new Wallet(payerKey);
  const signature = Signature.from(await payer.signTypedData(devnet.eip712Domain, CANCEL_TYPES, { authorizer: payer.address, nonce }));
  const submitter = new Wallet(devnet.accounts.deployer.privateKey, devnet.provider);
  const token = devnet.usdc.connect(submitter) as unknown as {
    cancelAuthorization(a: string, n: string, v: number, r: string, s: string, overrides: object): Promise<{ hash: string; wait(): Promise<unknown> }>;
  };
  const tx = await token.cancelAuthorization(payer.address, nonce, signature.v, signature.r, signature.s, opts.overrides ?? {});
  if (opts.wait !== false) await tx.wait();
  return tx.hash;
}

/** A fresh merchant with ETH for gas, some USDC (maybe none) and an allowance to the treasury (maybe none). */
export async function newMerchant(devnet: Devnet, opts: { balance: bigint; allowance: bigint }): Promise<Wallet> {
  const merchant = Wallet.createRandom();
  await devnet.setEthBalance(merchant.address, 10n ** 18n);
  if (opts.balance > 0n) await devnet.mint(merchant.address, opts.balance);
  if (opts.allowance > 0n) await devnet.approveTreasury(merchant.privateKey, opts.allowance);
  return new Wallet(merchant.privateKey);
}

export interface Balances {
  payer: bigint;
  merchant: bigint;
  treasury: bigint;
}

export async function balances(devnet: Devnet, merchant = devnet.accounts.merchant.address, payer = devnet.accounts.payer.address): Promise<Balances> {
  const [p, m, t] = await Promise.all([devnet.balanceOf(payer), devnet.balanceOf(merchant), devnet.balanceOf(devnet.accounts.treasury.address)]);
  return { payer: p, merchant: m, treasury: t };
}

export function difference(after: Balances, before: Balances): Balances {
  return { payer: after.payer - before.payer, merchant: after.merchant - before.merchant, treasury: after.treasury - before.treasury };
}

/** How many token Transfer events moved funds from `from` to `to` since `fromBlock`: fees and payments counted on chain. */
export async function transfersOnChain(devnet: Devnet, fromBlock: number, from: string, to: string): Promise<number> {
  const logs = await devnet.provider.getLogs({
    address: devnet.token,
    fromBlock,
    toBlock: 'latest',
    topics: [topicOf('Transfer(address,address,uint256)'), zeroPadValue(from, 32), zeroPadValue(to, 32)],
  });
  return logs.length;
}

/** How many transactions the treasury and the relayers have sent (mined): what the service has spent gas on. */
export async function sentByUs(devnet: Devnet): Promise<number> {
  const senders = [devnet.accounts.treasury.address, ...devnet.accounts.relayers.map((r) => r.address)];
  const counts = await Promise.all(senders.map((a) => devnet.provider.getTransactionCount(a, 'latest')));
  return counts.reduce((a, b) => a + b, 0);
}
