import { GasCapExceededError, TransactionWouldRevertError } from '@facilitator/evm-sending';
import { reservationRefusal } from './reservation-refusal';
import type { ReservationRefusalTerms } from '../step-outcome';
import type { PayerInFlight } from '@facilitator/db';
import { calldataGas } from '@facilitator/evm-executor';
import type { TransferAuthorization } from '@facilitator/core';
import type { Step, StepContext } from '../step';
import {
  AMOUNT,
  CHAIN_ID,
  ERC6492_SIGNATURE,
  FACTORY,
  FACTORY_CALLDATA,
  FakeTransactions,
  FEE,
  GAS_CAPS,
  MERCHANT,
  NONCE,
  NOW,
  PAYER,
  PLAIN_SIGNATURE,
  RELAYER_A,
  RELAYER_B,
  reverted,
  confirmed,
  settlementFixture,
  stepHarness,
  TOKEN,
  transferFromCalldata,
  transferLog,
  transferWithAuthorizationCalldata,
  TREASURY,
  type StepHarness,
  moved,
  fakeBlockHash,
  testSealOf,
} from '../testing/fakes';
import { checkAllowance as checkAllowanceStep } from './check-allowance';
import { collectFee as collectFeeStep } from './collect-fee';
import { confirmTransfer as confirmTransferStep } from './confirm-transfer';
import { deployWallet as deployWalletStep } from './deploy-wallet';
import { preflight as preflightStep } from './preflight';
import { submitTransfer as submitTransferStep } from './submit-transfer';
import { transferNotExecuted } from './transfer-not-executed';
import { type StepResult, isWait, type StepWait } from '../step-outcome';
import { SettlementWaitReason } from '../wait-reasons';

/** What the machine answers when the step's fee reservation is refused with `inFlight` (and the payer's in flight). */
function refusedAs(step: { reserveFee?: { refusal: ReservationRefusalTerms } }, inFlight: bigint, payer?: PayerInFlight, nowSeconds = NOW) {
  return reservationRefusal(step.reserveFee!.refusal, inFlight, payer, nowSeconds);
}


/** The step, for the tests that expect it to move on (a wait fails them); the waits have tests of their own. */
function moving(step: Step): (ctx: StepContext) => Promise<StepResult> {
  return async (ctx) => moved(await step(ctx));
}
const checkAllowance = moving(checkAllowanceStep);
const collectFee = moving(collectFeeStep);
const confirmTransfer = moving(confirmTransferStep);
const deployWallet = moving(deployWalletStep);
const preflight = moving(preflightStep);
const submitTransfer = moving(submitTransferStep);

const AUTH: TransferAuthorization = {
  from: PAYER,
  to: MERCHANT,
  value: AMOUNT,
  validAfter: 0n,
  validBefore: BigInt(NOW + 3600),
  nonce: NONCE,
};
const TRANSFER_DATA = transferWithAuthorizationCalldata(AUTH, PLAIN_SIGNATURE);
/** a transfer's cap is its kind's execution cap plus its calldata's gas */
const DATA_GAS = calldataGas(TRANSFER_DATA);
const FEE_TX_HASH = FakeTransactions.hashOf('stl_1', 'fee');
const TRANSFER_TX_HASH = FakeTransactions.hashOf('stl_1', 'transfer');

/** The settlement as it is once the fee was collected. */
const afterFee = (state: 'fee_collected' | 'executing' = 'fee_collected') =>
  settlementFixture({ state, feeTxHash: FEE_TX_HASH, feeCollectedAt: new Date(NOW * 1000) });

/** A reservation refusal that ends the settlement (the merchant's fee refusals never wait). */
function refusal(result: StepResult | StepWait): StepResult {
  if (isWait(result)) throw new Error(`unexpected wait: ${result.wait.reason}`);
  return result;
}

/** A final failure's error details. */
function details(result: StepResult): Record<string, unknown> {
  expect(result.to).toBe('failed');
  return (result.data?.errorDetails ?? {}) as Record<string, unknown>;
}

/** Nothing moved any money: no fee and no transfer were sent, nothing was even handed to the provider. */
function expectNothingSent(h: StepHarness): void {
  expect(h.transactions.sent).toEqual([]);
  expect(h.log.filter((call) => call.startsWith('tx.submit'))).toEqual([]);
}

/** A failure before the fee: the payment is released for another attempt and nobody was charged. */
function expectDoomedBeforeFee(result: StepResult, reason: string): Record<string, unknown> {
  const d = details(result);
  expect(result.data).toMatchObject({ errorCode: 'settlement_failed', errorMessage: `settlement failed: ${reason}`, paymentKey: null });
  expect(d).toMatchObject({ reason, fee_status: 'not_collected', merchant_charged: false, customer_charged: false });
  return d;
}

/** A failure after the fee: the fee is kept, the payment stays owned by this settlement. */
function expectFailedAfterFee(result: StepResult, reason: string): Record<string, unknown> {
  const d = details(result);
  expect(result.data).toMatchObject({ errorCode: 'settlement_failed', errorMessage: `settlement failed: ${reason}` });
  expect(result.data).not.toHaveProperty('paymentKey');
  expect(d).toMatchObject({
    reason,
    settlement_error: reason,
    fee_status: 'collected',
    fee_amount: FEE.toString(),
    fee_tx_hash: FEE_TX_HASH,
    merchant_charged: true,
    customer_charged: false,
  });
  return d;
}

describe('preflight (pending)', () => {
  it('moves an unused, unexpired EOA authorization whose estimate fits the cap to check_allowance', async () => {
    const h = stepHarness();
    const result = await preflight(h.ctx);
    expect(result).toEqual({ to: 'check_allowance', data: { admission: testSealOf(h.ctx.settlement) }, note: { transfer_gas_estimate: '60000', payer_kind: 'eoa' } });
    // estimated from the first relayer, against the token, with the exact transfer the worker will send
    expect(h.chain.estimateCalls).toEqual([{ from: RELAYER_A, data: TRANSFER_DATA, to: TOKEN }]);
    expect(h.log).toContain(`chain.isAuthorizationUsed(${PAYER},${NONCE})`);
    expectNothingSent(h);
  });

  it('fails an authorization that expires within the margin, having read only whether its nonce was used', async () => {
    const h = stepHarness(settlementFixture({}, { validBefore: String(NOW + 30) }));
    const result = await preflight(h.ctx);
    const d = expectDoomedBeforeFee(result, 'authorization expired');
    expect(d).toMatchObject({ validBefore: String(NOW + 30), currentTime: String(NOW) });
    expect(h.log).toEqual([`chain.isAuthorizationUsed(${PAYER},${NONCE})`]);
    expectNothingSent(h);
  });

  it('accepts an authorization valid one second past the margin', async () => {
    const h = stepHarness(settlementFixture({}, { validBefore: String(NOW + 31) }));
    expect((await preflight(h.ctx)).to).toBe('check_allowance');
  });

  it('fails an authorization already used or canceled on chain, without estimating or sending anything', async () => {
    const h = stepHarness();
    h.chain.authorizationUsed = true;
    const result = await preflight(h.ctx);
    expectDoomedBeforeFee(result, 'authorization is used or canceled on chain');
    expect(result.note).toEqual({ error: 'settlement_failed', reason: 'authorization is used or canceled on chain' });
    expect(h.chain.estimateCalls).toEqual([]);
    expectNothingSent(h);
  });

  it('settles, before any fee, a payment someone else executed to the merchant, even once its authorization expired', async () => {
    const h = stepHarness(settlementFixture({}, { validBefore: String(NOW + 30) }));
    h.chain.authorizationUsed = true;
    h.chain.authorizationUse = { transactionHash: '0xfront', blockNumber: 100, paidToMerchant: AMOUNT, to: '0x9999999999999999999999999999999999999999' };
    expect(await preflight(h.ctx)).toEqual({
      to: 'settled',
      data: { settlementTxHash: '0xfront', settledAt: expect.any(Date), merchantPaid: true, foreignExecution: { txHash: '0xfront', blockNumber: 100, blockHash: fakeBlockHash(100) } },
      note: { executed_by_third_party: true, tx_hash: '0xfront', block: 100, confirmations: 2, our_error: 'settlement failed: authorization is used or canceled on chain' },
    });
    expect(h.chain.estimateCalls).toEqual([]);
    expectNothingSent(h);
  });

  it('fails a used nonce that paid the merchant less than the settlement (it paid someone else)', async () => {
    const h = stepHarness();
    h.chain.authorizationUsed = true;
    h.chain.authorizationUse = { transactionHash: '0xelsewhere', blockNumber: 100, paidToMerchant: AMOUNT - 1n };
    expectDoomedBeforeFee(await preflight(h.ctx), 'authorization is used or canceled on chain');
  });

  it('fails when the transfer estimate reverts, with the revert reason', async () => {
    const h = stepHarness();
    h.chain.estimates.set(TOKEN, { revert: 'FiatTokenV2: invalid signature' });
    const d = expectDoomedBeforeFee(await preflight(h.ctx), 'FiatTokenV2: invalid signature');
    expect(d.simulation).toBe('transferWithAuthorization');
    expectNothingSent(h);
  });

  it('fails when the estimate is above the EOA transfer cap (plus its calldata), and passes at the cap exactly', async () => {
    const h = stepHarness();
    h.chain.estimates.set(TOKEN, { gas: GAS_CAPS.transfer + DATA_GAS + 1n });
    const d = expectDoomedBeforeFee(await preflight(h.ctx), 'transfer gas estimate is above its cap');
    expect(d).toMatchObject({ gas_estimate: String(GAS_CAPS.transfer + DATA_GAS + 1n), gas_cap: String(GAS_CAPS.transfer + DATA_GAS), payer_kind: 'eoa' });
    expectNothingSent(h);

    h.chain.estimates.set(TOKEN, { gas: GAS_CAPS.transfer + DATA_GAS });
    expect((await preflight(h.ctx)).to).toBe('check_allowance');
  });

  it('holds a contract-wallet payer to the contract transfer cap', async () => {
    const h = stepHarness();
    h.chain.withCode.add(PAYER);
    h.chain.estimates.set(TOKEN, { gas: 300_000n });
    expect(await preflight(h.ctx)).toEqual({ to: 'check_allowance', data: { admission: testSealOf(h.ctx.settlement) }, note: { transfer_gas_estimate: '300000', payer_kind: 'contract' } });

    h.chain.estimates.set(TOKEN, { gas: GAS_CAPS.contractTransfer + DATA_GAS + 1n });
    const d = expectDoomedBeforeFee(await preflight(h.ctx), 'transfer gas estimate is above its cap');
    expect(d).toMatchObject({ gas_cap: String(GAS_CAPS.contractTransfer + DATA_GAS), payer_kind: 'contract' });
  });

  describe('an ERC-6492 payer', () => {
    const erc6492 = () => settlementFixture({}, { signature: ERC6492_SIGNATURE });

    it('whose wallet is not deployed goes to deploying_wallet after estimating the factory call', async () => {
      const h = stepHarness(erc6492());
      h.chain.estimates.set(FACTORY, { gas: 250_000n });
      const result = await preflight(h.ctx);
      expect(result).toEqual({ to: 'deploying_wallet', data: { admission: testSealOf(h.ctx.settlement) }, note: { factory: FACTORY, deploy_gas_estimate: '250000', payer_kind: 'erc6492' } });
      expect(h.chain.estimateCalls).toEqual([{ from: RELAYER_A, data: FACTORY_CALLDATA, to: FACTORY }]);
      expectNothingSent(h);
    });

    it('fails when the factory is not on the allowlist', async () => {
      const h = stepHarness(erc6492());
      h.ctx.network.walletFactories = ['0x7777777777777777777777777777777777777777'];
      const d = expectDoomedBeforeFee(await preflight(h.ctx), 'the ERC-6492 factory is not on the allowlist');
      expect(d.factory).toBe(FACTORY);
      expect(h.chain.estimateCalls).toEqual([]);
    });

    it('fails when the factory call would revert', async () => {
      const h = stepHarness(erc6492());
      h.chain.estimates.set(FACTORY, { revert: 'Create2: failed on deploy' });
      const d = expectDoomedBeforeFee(await preflight(h.ctx), 'Create2: failed on deploy');
      expect(d).toMatchObject({ simulation: 'wallet deployment', factory: FACTORY });
      expectNothingSent(h);
    });

    it('fails when the deployment would need more gas than its cap', async () => {
      const h = stepHarness(erc6492());
      h.chain.estimates.set(FACTORY, { gas: GAS_CAPS.walletDeploy + 1n });
      const d = expectDoomedBeforeFee(await preflight(h.ctx), 'wallet deployment gas estimate is above its cap');
      expect(d).toMatchObject({ gas_estimate: '1000001', gas_cap: '1000000', payer_kind: 'erc6492' });
    });

    it('whose wallet exists already is estimated as a contract with its inner signature', async () => {
      const h = stepHarness(erc6492());
      h.chain.withCode.add(PAYER);
      expect(await preflight(h.ctx)).toEqual({ to: 'check_allowance', data: { admission: testSealOf(h.ctx.settlement) }, note: { transfer_gas_estimate: '60000', payer_kind: 'contract' } });
      expect(h.chain.estimateCalls).toEqual([{ from: RELAYER_A, data: TRANSFER_DATA, to: TOKEN }]);
    });
  });
});

describe('deployWallet (deploying_wallet)', () => {
  const deploying = () => settlementFixture({ state: 'deploying_wallet' }, { signature: ERC6492_SIGNATURE });

  it('sends the factory call from a relayer, waits for it, then runs the pre-flight against the deployed wallet', async () => {
    const h = stepHarness(deploying());
    h.transactions.onMined.set('wallet_deploy', () => h.chain.withCode.add(PAYER));
    const result = await deployWallet(h.ctx);
    expect(result).toEqual({ to: 'check_allowance', data: { admission: testSealOf(h.ctx.settlement) }, note: { transfer_gas_estimate: '60000', payer_kind: 'contract', wallet_deployed: true } });
    expect(h.transactions.sent).toEqual([
      { settlementId: 'stl_1', purpose: 'wallet_deploy', chainId: CHAIN_ID, from: RELAYER_A, to: FACTORY, data: FACTORY_CALLDATA, gasCap: GAS_CAPS.walletDeploy },
    ]);
    expect(h.transactions.waits).toEqual([{ id: 'tx_wallet_deploy_stl_1', confirmations: 2 }]);
    // the transfer is estimated only once the wallet exists
    expect(h.log.indexOf('tx.waitForOutcome(wallet_deploy)')).toBeLessThan(h.log.indexOf(`chain.estimate(${TOKEN})`));
    expect(h.transactions.sentFor('fee')).toEqual([]);
  });

  it('sends nothing when the wallet was deployed meanwhile by someone else', async () => {
    const h = stepHarness(deploying());
    h.chain.withCode.add(PAYER);
    const result = await deployWallet(h.ctx);
    expect(result.to).toBe('check_allowance');
    expect(result.note).toMatchObject({ wallet_deployed: true });
    expectNothingSent(h);
  });

  it('after a crash waits for the deployment already sent instead of sending another', async () => {
    const h = stepHarness(deploying());
    h.transactions.seed('stl_1', 'wallet_deploy', RELAYER_B);
    h.transactions.onMined.set('wallet_deploy', () => h.chain.withCode.add(PAYER));
    expect((await deployWallet(h.ctx)).to).toBe('check_allowance');
    expectNothingSent(h);
    expect(h.transactions.waits).toEqual([{ id: 'tx_wallet_deploy_stl_1', confirmations: 2 }]);
  });

  it("awaits our deployment's confirmations even when the wallet's code is already seen (it may still be reorged away)", async () => {
    const h = stepHarness(deploying());
    h.transactions.seed('stl_1', 'wallet_deploy', RELAYER_B);
    h.chain.withCode.add(PAYER);
    let mine!: () => void;
    const mined = new Promise<void>((resolve) => (mine = resolve));
    h.transactions.outcomes.set('wallet_deploy', async (tx) => (await mined, { status: 'confirmed', hash: tx.hash, blockNumber: 101, logs: [] }));
    const early = await deployWalletStep(h.ctx);
    expect(early).toMatchObject({ awaiting: { status: 'pending', transactionId: 'tx_wallet_deploy_stl_1' } });
    expect(h.log.some((l) => l.startsWith('chain.estimate'))).toBe(false);
    mine();
    await (early as { awaiting: { known: Promise<void> } }).awaiting.known;
    expect((await deployWallet(h.ctx)).to).toBe('check_allowance');
    expectNothingSent(h);
  });

  it('fails before any fee when the deployment reverted', async () => {
    const h = stepHarness(deploying());
    h.transactions.outcomes.set('wallet_deploy', reverted('factory: paused'));
    const d = expectDoomedBeforeFee(await deployWallet(h.ctx), 'factory: paused');
    expect(d.wallet_deploy_tx_hash).toBe(FakeTransactions.hashOf('stl_1', 'wallet_deploy'));
    expect(h.transactions.sentFor('fee')).toEqual([]);
  });

  it('fails when the factory call was mined but left no code at the payer', async () => {
    const h = stepHarness(deploying());
    const d = expectDoomedBeforeFee(await deployWallet(h.ctx), 'the factory call did not deploy authorization.from');
    expect(d.wallet_deploy_tx_hash).toBe(FakeTransactions.hashOf('stl_1', 'wallet_deploy'));
  });

  it('goes on to the pre-flight when the factory call would revert because the wallet appeared meanwhile', async () => {
    const h = stepHarness(deploying());
    h.transactions.submitErrors.set('wallet_deploy', new TransactionWouldRevertError('already deployed', undefined));
    // not deployed when first read, deployed when read again after the refusal
    const hasCode = h.chain.hasCode.bind(h.chain);
    let reads = 0;
    h.chain.hasCode = async (account) => {
      if (++reads === 2) h.chain.withCode.add(PAYER);
      return hasCode(account);
    };
    const result = await deployWallet(h.ctx);
    expect(result.to).toBe('check_allowance');
    expect(result.note).toMatchObject({ payer_kind: 'contract' });
    expect(h.transactions.sent).toEqual([]);
    expect(h.transactions.waits).toEqual([]);
  });

  it('fails before any fee when the factory call would revert and the wallet is still missing', async () => {
    const h = stepHarness(deploying());
    h.transactions.submitErrors.set('wallet_deploy', new TransactionWouldRevertError('factory: bad salt', undefined));
    const d = expectDoomedBeforeFee(await deployWallet(h.ctx), 'factory: bad salt');
    expect(d.simulation).toBe('wallet deployment');
    expect(h.transactions.sent).toEqual([]);
  });

  it('fails before any fee when the factory call would exceed its gas cap', async () => {
    const h = stepHarness(deploying());
    const error = new GasCapExceededError(2_000_000n, GAS_CAPS.walletDeploy);
    h.transactions.submitErrors.set('wallet_deploy', error);
    const d = expectDoomedBeforeFee(await deployWallet(h.ctx), error.message);
    expect(d.payer_kind).toBe('erc6492');
  });

  it('throws (a broken invariant) for a payer without code and without an ERC-6492 signature', async () => {
    const h = stepHarness(settlementFixture({ state: 'deploying_wallet' }));
    await expect(deployWallet(h.ctx)).rejects.toThrow('deploying a wallet without an ERC-6492 signature');
    expectNothingSent(h);
  });
});

describe('checkAllowance (check_allowance)', () => {
  const checking = () => settlementFixture({ state: 'check_allowance' });

  it('fixes the atomic path where the network has it, but sequential for a payment smaller than the fee', async () => {
    const h = stepHarness();
    h.ctx.policy.networkPath = 'atomic';
    expect((await checkAllowance(h.ctx)).data).toEqual({ settlementMode: 'atomic' });
    const small = stepHarness(settlementFixture({ amount: (FEE - 1n).toString() }));
    small.ctx.policy.networkPath = 'atomic';
    expect((await checkAllowance(small.ctx)).data).toEqual({ settlementMode: 'sequential' });
  });

  it('asks to reserve the fee against the allowance and balance it read, and sends nothing', async () => {
    const h = stepHarness(checking());
    h.chain.allowanceOf = 50_000n;
    h.chain.balance = 70_000n;
    const result = await checkAllowance(h.ctx);
    expect(result.to).toBe('collect_fee');
    // the path is fixed on entering collect_fee: sequential unless the network settles atomically (see below)
    expect(result.data).toEqual({ settlementMode: 'sequential' });
    expect(result.note).toEqual({ allowance: '50000', balance: '70000', path: 'sequential' });
    expect(result.reserveFee?.request).toEqual({ merchant: MERCHANT, chainId: CHAIN_ID, tokenAddress: TOKEN, fee: FEE, allowance: 50_000n, balance: 70_000n });
    expect(h.log).toContain(`chain.allowance(${MERCHANT},${TREASURY})`);
    expectNothingSent(h);
  });

  it('waits when the fee fits the allowance alone but not on top of the fees in flight (a fee taken but not yet recorded would count twice)', async () => {
    const h = stepHarness(checking());
    h.chain.allowanceOf = 25_000n;
    const answer = refusedAs((await checkAllowance(h.ctx)), 20_000n);
    expect(answer).toEqual({ wait: { reason: 'merchant_fees_in_flight', detail: { allowance: '25000', balance: h.chain.balance.toString(), fees_in_flight: '20000', fee: '10000' } } });
  });

  it('when refused for the allowance: insufficient_allowance with what is left after the fees in flight', async () => {
    const h = stepHarness(checking());
    h.chain.allowanceOf = 5_000n;
    const refused = refusal(refusedAs((await checkAllowance(h.ctx)), 20_000n));
    const d = details(refused);
    expect(refused.data).toMatchObject({ errorCode: 'insufficient_allowance', paymentKey: null });
    expect(d).toMatchObject({ required: '10000', available: '0', fees_in_flight: '20000', merchant: MERCHANT, treasury: TREASURY });
    expect(d.approval_command).toContain(`--treasury ${TREASURY}`);
    expect(d.approval_command_cast).toContain(`cast send ${TOKEN} "approve(address,uint256)" ${TREASURY} ${FEE * 100n}`);
  });

  it('when the allowance alone is below the fee: insufficient_allowance with the allowance as available', async () => {
    const h = stepHarness(checking());
    h.chain.allowanceOf = FEE - 1n;
    const d = details(refusal(refusedAs((await checkAllowance(h.ctx)), 0n)));
    expect(d).toMatchObject({ required: '10000', available: '9999' });
    expect(d).not.toHaveProperty('fees_in_flight');
  });

  it('when refused for the balance: fee_collection_failed with the balance left after the fees in flight', async () => {
    const h = stepHarness(checking());
    h.chain.allowanceOf = 1_000_000n;
    h.chain.balance = 5_000n;
    const refused = refusal(refusedAs((await checkAllowance(h.ctx)), 10_000n));
    expect(refused.data).toMatchObject({ errorCode: 'fee_collection_failed', paymentKey: null });
    expect(details(refused)).toMatchObject({ reason: 'merchant token balance is below the fee', merchant_balance: '0', required_fee: '10000', fees_in_flight: '10000' });
  });

  it('waits when the fee fits the balance alone but not on top of the fees in flight', async () => {
    const h = stepHarness(checking());
    h.chain.allowanceOf = 1_000_000n;
    h.chain.balance = 15_000n;
    expect(refusedAs((await checkAllowance(h.ctx)), 10_000n)).toMatchObject({ wait: { reason: 'merchant_fees_in_flight' } });
  });

  it('pauses a merchant whose fee transfers kept reverting, before reading the chain', async () => {
    const lastAt = new Date('2027-01-01T00:00:00Z');
    const h = stepHarness(checking(), { feeReverts: { count: 3, lastAt } });
    const before = Date.now();
    const result = await checkAllowance(h.ctx);
    expect(result.data).toMatchObject({ errorCode: 'fee_collection_failed', paymentKey: null });
    expect(details(result)).toMatchObject({
      reason: 'merchant paused after repeated fee transfer reverts',
      paused_until: new Date(lastAt.getTime() + 600_000).toISOString(),
      reverts_before_pause: 3,
    });
    // counted over the pause window
    const since = h.feeRevertQueries[0].getTime();
    expect(since).toBeGreaterThanOrEqual(before - 600_000);
    expect(since).toBeLessThanOrEqual(Date.now() - 600_000);
    expect(h.log.filter((call) => call.startsWith('chain.'))).toEqual([]);
    expectNothingSent(h);
  });

  it('does not pause below the revert threshold', async () => {
    const h = stepHarness(checking(), { feeReverts: { count: 2, lastAt: new Date() } });
    expect((await checkAllowance(h.ctx)).to).toBe('collect_fee');
  });
});

describe('collectFee (collect_fee)', () => {
  const collecting = () => settlementFixture({ state: 'collect_fee' });

  it('sends transferFrom(merchant, treasury, fee) from the treasury and moves to fee_collected once confirmed', async () => {
    const h = stepHarness(collecting());
    const result = await collectFee(h.ctx);
    expect(h.transactions.sent).toEqual([
      {
        settlementId: 'stl_1',
        purpose: 'fee',
        chainId: CHAIN_ID,
        from: TREASURY,
        to: TOKEN,
        data: transferFromCalldata(MERCHANT, TREASURY, FEE),
        gasCap: GAS_CAPS.fee,
      },
    ]);
    expect(h.transactions.waits).toEqual([{ id: 'tx_fee_stl_1', confirmations: 2 }]);
    expect(result).toEqual({ to: 'fee_collected', data: { feeTxHash: FEE_TX_HASH, feeCollectedAt: expect.any(Date) }, note: { fee_tx_hash: FEE_TX_HASH } });
  });

  // issue 40 (review): a database writer inserts rows straight into collect_fee with payments nobody signed
  describe('charges only a settlement whose payment this worker checked (its pre-flight sealed it, or collect_fee checks it now)', () => {
    const rejected = (s: ReturnType<typeof settlementFixture>) => ({ ...s, verification: { ...s.verification, status: 'rejected' } }) as typeof s;

    it('a row with no seal whose payment fails the pre-flight checks: nothing sent, failed with the payment released', async () => {
      const h = stepHarness(rejected(settlementFixture({ state: 'collect_fee', settlementMode: 'sequential', admission: null })));
      const result = (await collectFee(h.ctx)) as StepResult;
      expectNothingSent(h);
      expect(h.log).not.toContain('db.claimSend');
      expect(result.to).toBe('failed');
      expect(result.data?.errorMessage).toContain('verification of this payment was rejected');
    });

    it("a seal copied from another settlement's row, or one this worker cannot check, is no seal: the payment is checked here", async () => {
      const genuine = settlementFixture({ state: 'collect_fee' });
      const copied = stepHarness(rejected(settlementFixture({ id: 'stl_forged', state: 'collect_fee', admission: genuine.admission })));
      const keyless = stepHarness(rejected(collecting()), { overrides: { admission: undefined } });
      for (const h of [copied, keyless]) {
        expect(((await collectFee(h.ctx)) as StepResult).to).toBe('failed');
        expectNothingSent(h);
      }
    });

    it('a row with no seal whose payment passes the checks (a keyless worker ran its pre-flight before the treasury key took over) is charged', async () => {
      const h = stepHarness(settlementFixture({ state: 'collect_fee', settlementMode: 'sequential', admission: null }));
      expect(((await collectFee(h.ctx)) as StepResult).to).toBe('fee_collected');
    });

    it('the pre-flight seals what collect_fee accepts', async () => {
      const pending = stepHarness(settlementFixture({ admission: null }));
      const passed = (await preflight(pending.ctx)) as StepResult;
      const h = stepHarness({ ...pending.ctx.settlement, state: 'collect_fee', admission: passed.data!.admission! });
      expect(((await collectFee(h.ctx)) as StepResult).to).toBe('fee_collected');
    });
  });

  it('after a crash waits for the fee already sent instead of sending another', async () => {
    const h = stepHarness(collecting());
    h.transactions.seed('stl_1', 'fee');
    expect((await collectFee(h.ctx)).to).toBe('fee_collected');
    expectNothingSent(h);
    expect(h.transactions.waits).toEqual([{ id: 'tx_fee_stl_1', confirmations: 2 }]);
  });

  it('fails with fee_collection_failed and sends nothing when the merchant balance is below the fee', async () => {
    const h = stepHarness(collecting());
    h.chain.balance = FEE - 1n;
    const result = await collectFee(h.ctx);
    expect(result.data).toMatchObject({ errorCode: 'fee_collection_failed', paymentKey: null });
    expect(details(result)).toMatchObject({ reason: 'merchant token balance is below the fee', merchant_balance: '9999', required_fee: '10000' });
    expectNothingSent(h);
  });

  it('fails with fee_collection_failed when the fee would revert though the allowance covers it', async () => {
    const h = stepHarness(collecting());
    h.transactions.submitErrors.set('fee', new TransactionWouldRevertError('ERC20: transfer amount exceeds balance', undefined));
    const result = await collectFee(h.ctx);
    expect(result.data).toMatchObject({ errorCode: 'fee_collection_failed', paymentKey: null });
    expect(details(result).reason).toBe('ERC20: transfer amount exceeds balance');
    expect(h.transactions.sent).toEqual([]);
    expect(h.transactions.waits).toEqual([]);
  });

  it('fails with insufficient_allowance when the fee would revert because the allowance ran out', async () => {
    const h = stepHarness(collecting());
    h.transactions.submitErrors.set('fee', new TransactionWouldRevertError('ERC20: insufficient allowance', undefined));
    h.chain.allowanceOf = 4_000n;
    const result = await collectFee(h.ctx);
    expect(result.data).toMatchObject({ errorCode: 'insufficient_allowance', paymentKey: null });
    expect(details(result)).toMatchObject({ required: '10000', available: '4000', merchant: MERCHANT, treasury: TREASURY });
    expect(h.transactions.sent).toEqual([]);
  });

  it('fails with fee_collection_failed, fee not collected, when the fee would exceed its gas cap', async () => {
    const h = stepHarness(collecting());
    const error = new GasCapExceededError(200_000n, GAS_CAPS.fee);
    h.transactions.submitErrors.set('fee', error);
    const result = await collectFee(h.ctx);
    expect(result.data).toMatchObject({ errorCode: 'fee_collection_failed', paymentKey: null });
    expect(result.data).not.toHaveProperty('feeTxHash');
    expect(details(result).reason).toBe('transaction would need 200000 gas, above its cap of 100000');
    expect(h.transactions.sent).toEqual([]);
  });

  it('rethrows other sending errors (the job retries them)', async () => {
    const h = stepHarness(collecting());
    h.transactions.submitErrors.set('fee', new Error('socket hang up'));
    await expect(collectFee(h.ctx)).rejects.toThrow('socket hang up');
  });

  it('fails with fee_collection_failed and the fee hash when the fee transfer reverted, releasing the payment', async () => {
    const h = stepHarness(collecting());
    h.transactions.outcomes.set('fee', reverted('ERC20: insufficient allowance'));
    h.chain.balance = 12_345n;
    const result = await collectFee(h.ctx);
    expect(result.data).toMatchObject({ errorCode: 'fee_collection_failed', feeTxHash: FEE_TX_HASH, paymentKey: null });
    expect(details(result)).toMatchObject({ reason: 'ERC20: insufficient allowance', merchant_balance: '12345' });
    expect(h.transactions.sentFor('transfer')).toEqual([]);
  });

  it('says "fee transfer reverted" when the revert had no reason', async () => {
    const h = stepHarness(collecting());
    h.transactions.outcomes.set('fee', reverted());
    expect(details(await collectFee(h.ctx)).reason).toBe('fee transfer reverted');
  });
});

describe('submitTransfer (fee_collected)', () => {
  it('sends transferWithAuthorization from the next relayer within the EOA cap and moves to executing', async () => {
    const h = stepHarness(afterFee());
    const result = await submitTransfer(h.ctx);
    expect(h.transactions.sent).toEqual([
      { settlementId: 'stl_1', purpose: 'transfer', chainId: CHAIN_ID, from: RELAYER_A, to: TOKEN, data: TRANSFER_DATA, gasCap: GAS_CAPS.transfer + DATA_GAS },
    ]);
    expect(result).toEqual({ to: 'executing', data: { settlementTxHash: TRANSFER_TX_HASH }, note: { tx_hash: TRANSFER_TX_HASH, relayer: RELAYER_A } });
  });

  it('gives a contract-wallet payer the contract cap, and the token the inner signature of an ERC-6492 one', async () => {
    const h = stepHarness(settlementFixture({ state: 'fee_collected', feeTxHash: FEE_TX_HASH }, { signature: ERC6492_SIGNATURE }));
    h.chain.withCode.add(PAYER);
    await submitTransfer(h.ctx);
    expect(h.transactions.sent[0]).toMatchObject({ data: TRANSFER_DATA, gasCap: GAS_CAPS.contractTransfer + DATA_GAS });
  });

  it("sends no transfer of an x402 settlement whose settle request withheld it (answered failed): fails, fee kept, payer not charged", async () => {
    const h = stepHarness(settlementFixture({ state: 'fee_collected', feeTxHash: FEE_TX_HASH, surface: 'x402' }), { overrides: { claimTransfer: async () => false } });
    const result = await submitTransfer(h.ctx);
    expectNothingSent(h);
    expect(result.to).toBe('failed');
    expect(details(result)).toMatchObject({ fee_status: 'collected', customer_charged: false });
    expect(result.data?.errorMessage).toMatch(/answered before the transfer could be sent/);
  });

  it('commits to the transfer of an x402 settlement before signing it, and of no other surface (no extra statement there)', async () => {
    const x402 = stepHarness(settlementFixture({ state: 'fee_collected', feeTxHash: FEE_TX_HASH, surface: 'x402' }));
    expect((await submitTransfer(x402.ctx)).to).toBe('executing');
    expect(x402.log.indexOf('db.claimTransfer')).toBeGreaterThanOrEqual(0);
    const v1 = stepHarness(afterFee());
    expect((await submitTransfer(v1.ctx)).to).toBe('executing');
    expect(v1.log).not.toContain('db.claimTransfer');
  });

  it('after a crash resumes with the transfer already sent', async () => {
    const h = stepHarness(afterFee());
    h.transactions.seed('stl_1', 'transfer', RELAYER_B);
    expect(await submitTransfer(h.ctx)).toEqual({ to: 'executing', data: { settlementTxHash: TRANSFER_TX_HASH }, note: { resumed: true } });
    expectNothingSent(h);
  });

  it('fails after the fee, fee kept, when the transfer would revert and nobody else used the authorization', async () => {
    const h = stepHarness(afterFee());
    h.transactions.submitErrors.set('transfer', new TransactionWouldRevertError('FiatTokenV2: authorization is expired', undefined));
    const d = expectFailedAfterFee(await submitTransfer(h.ctx), 'FiatTokenV2: authorization is expired');
    expect(d).not.toHaveProperty('authorization_used_by');
    expect(d).not.toHaveProperty('settlement_tx_hash');
    expect(h.log).toContain(`chain.findAuthorizationUse(${PAYER},${NONCE},${MERCHANT})`);
  });

  it('settles when the transfer would revert because someone else executed the authorization and paid the merchant', async () => {
    const h = stepHarness(afterFee());
    h.transactions.submitErrors.set('transfer', new TransactionWouldRevertError('FiatTokenV2: authorization is used or canceled', undefined));
    h.chain.authorizationUse = { transactionHash: '0xthird', blockNumber: 99, paidToMerchant: AMOUNT };
    expect(await submitTransfer(h.ctx)).toEqual({
      to: 'settled',
      data: { settlementTxHash: '0xthird', settledAt: expect.any(Date), merchantPaid: true, foreignExecution: { txHash: '0xthird', blockNumber: 99, blockHash: fakeBlockHash(99) } },
      note: { executed_by_third_party: true, tx_hash: '0xthird', block: 99, confirmations: 3, our_error: 'FiatTokenV2: authorization is used or canceled' },
    });
  });

  it('fails after the fee when the transfer would exceed its gas cap', async () => {
    const h = stepHarness(afterFee());
    const error = new GasCapExceededError(500_000n, GAS_CAPS.transfer);
    h.transactions.submitErrors.set('transfer', error);
    expectFailedAfterFee(await submitTransfer(h.ctx), error.message);
  });
});

describe('waiting for the chain: gas above the cap, no relayer with gas', () => {
  const SPIKE = { baseFeePerGas: 150_000_000_000n, maxFeePerGasCap: 100_000_000_000n, aboveCap: true };
  const collecting = () => settlementFixture({ state: 'collect_fee' });

  it('collect_fee waits, sending nothing, while the base fee is above the cap', async () => {
    const h = stepHarness(collecting());
    h.transactions.fee = SPIKE;
    expect(await collectFeeStep(h.ctx)).toEqual({
      wait: { reason: SettlementWaitReason.GasAboveCap, detail: { base_fee_per_gas: '150000000000', max_fee_per_gas_cap: '100000000000' } },
    });
    expectNothingSent(h);
  });

  it('collect_fee does not wait for a fee already sent: the provider keeps it and bumps it within the cap', async () => {
    const h = stepHarness(collecting());
    h.transactions.fee = SPIKE;
    h.transactions.seed('stl_1', 'fee');
    expect((await collectFee(h.ctx)).to).toBe('fee_collected');
    expect(h.log).not.toContain(`tx.networkFee(${CHAIN_ID})`);
  });

  it('collect_fee fails, charging nobody, when the authorization expired while it waited', async () => {
    const h = stepHarness(settlementFixture({ state: 'collect_fee' }, { validBefore: String(NOW + 30) }));
    expectDoomedBeforeFee(await collectFee(h.ctx), 'authorization expired before the fee could be sent');
    expectNothingSent(h);
  });

  it('collect_fee waits, sending nothing, when no relayer could send the transfer after it', async () => {
    const h = stepHarness(collecting(), { overrides: { anyFundedRelayer: async () => false } });
    expect(await collectFeeStep(h.ctx)).toEqual({ wait: { reason: SettlementWaitReason.NoFundedRelayer, detail: { relayers: 2 } } });
    expectNothingSent(h);
  });

  it('fee_collected waits, sending nothing, while the base fee is above the cap', async () => {
    const h = stepHarness(afterFee());
    h.transactions.fee = SPIKE;
    const result = await submitTransferStep(h.ctx);
    expect(isWait(result) && result.wait.reason).toBe(SettlementWaitReason.GasAboveCap);
    expectNothingSent(h);
  });

  it('fee_collected waits when no relayer has gas', async () => {
    const h = stepHarness(afterFee(), { overrides: { nextRelayer: async () => undefined } });
    expect(await submitTransferStep(h.ctx)).toEqual({ wait: { reason: SettlementWaitReason.NoFundedRelayer, detail: { relayers: 2 } } });
    expectNothingSent(h);
  });

  it('fee_collected does not wait for an expired authorization: the refused submit ends it, fee kept', async () => {
    const h = stepHarness(settlementFixture({ state: 'fee_collected', feeTxHash: FEE_TX_HASH }, { validBefore: String(NOW + 10) }));
    h.transactions.fee = SPIKE;
    h.transactions.submitErrors.set('transfer', new TransactionWouldRevertError('FiatTokenV2: authorization is expired', undefined));
    expectFailedAfterFee(await submitTransfer(h.ctx), 'FiatTokenV2: authorization is expired');
  });

  it('a wallet deployment waits for gas and for a funded relayer too', async () => {
    const deploying = () => settlementFixture({ state: 'deploying_wallet' }, { signature: ERC6492_SIGNATURE });
    const spike = stepHarness(deploying());
    spike.transactions.fee = SPIKE;
    expect(isWait(await deployWalletStep(spike.ctx))).toBe(true);
    const dry = stepHarness(deploying(), { overrides: { nextRelayer: async () => undefined } });
    const result = await deployWalletStep(dry.ctx);
    expect(isWait(result) && result.wait.reason).toBe(SettlementWaitReason.NoFundedRelayer);
    expectNothingSent(spike);
    expectNothingSent(dry);
  });
});

describe('confirmTransfer (executing)', () => {
  it('settles once the transfer is confirmed, with what it paid the merchant', async () => {
    const h = stepHarness(afterFee('executing'));
    h.transactions.seed('stl_1', 'transfer', RELAYER_A);
    h.transactions.outcomes.set(
      'transfer',
      confirmed([transferLog(PAYER, MERCHANT, AMOUNT), transferLog(PAYER, TREASURY, 5n), transferLog(PAYER, MERCHANT, 7n, '0x' + '99'.repeat(20))]),
    );
    const result = await confirmTransfer(h.ctx);
    expect(result).toEqual({
      to: 'settled',
      data: { settlementTxHash: TRANSFER_TX_HASH, settledAt: expect.any(Date), merchantPaid: true },
      note: { tx_hash: TRANSFER_TX_HASH, block: 101, paid: AMOUNT.toString() },
    });
    expect(h.transactions.waits).toEqual([{ id: 'tx_transfer_stl_1', confirmations: 2 }]);
    expectNothingSent(h);
  });

  it('fails after the fee, with our transaction hash, when the transfer reverted', async () => {
    const h = stepHarness(afterFee('executing'));
    h.transactions.seed('stl_1', 'transfer', RELAYER_A);
    h.transactions.outcomes.set('transfer', reverted('FiatTokenV2: invalid signature'));
    const result = await confirmTransfer(h.ctx);
    const d = expectFailedAfterFee(result, 'FiatTokenV2: invalid signature');
    expect(d.settlement_tx_hash).toBe(TRANSFER_TX_HASH);
    expect(result.data?.settlementTxHash).toBe(TRANSFER_TX_HASH);
  });

  it('says "transfer reverted" when the revert had no reason', async () => {
    const h = stepHarness(afterFee('executing'));
    h.transactions.seed('stl_1', 'transfer', RELAYER_A);
    h.transactions.outcomes.set('transfer', reverted());
    expectFailedAfterFee(await confirmTransfer(h.ctx), 'transfer reverted');
  });

  it('settles when ours reverted because a third party executed the authorization first', async () => {
    const h = stepHarness(afterFee('executing'));
    h.transactions.seed('stl_1', 'transfer', RELAYER_A);
    h.transactions.outcomes.set('transfer', reverted('FiatTokenV2: authorization is used or canceled'));
    h.chain.authorizationUse = { transactionHash: '0xthird', blockNumber: 100, paidToMerchant: AMOUNT };
    const result = await confirmTransfer(h.ctx);
    expect(result).toMatchObject({ to: 'settled', data: { settlementTxHash: '0xthird', merchantPaid: true }, note: { executed_by_third_party: true } });
  });

  it('throws (a broken invariant) when executing has no transfer stored', async () => {
    const h = stepHarness(afterFee('executing'));
    await expect(confirmTransfer(h.ctx)).rejects.toThrow('settlement stl_1 is executing but has no transfer transaction');
  });
});

describe('transferNotExecuted', () => {
  it('does not count our own reverted transaction as a third party execution', async () => {
    const h = stepHarness(afterFee('executing'));
    h.chain.authorizationUse = { transactionHash: TRANSFER_TX_HASH, blockNumber: 100, paidToMerchant: AMOUNT };
    const d = expectFailedAfterFee((await transferNotExecuted(h.ctx, 'reverted', TRANSFER_TX_HASH)) as StepResult, 'reverted');
    expect(d).toMatchObject({ settlement_tx_hash: TRANSFER_TX_HASH, authorization_used_by: TRANSFER_TX_HASH });
  });

  it('fails after the fee when a third party used the authorization but paid the merchant less than the amount', async () => {
    const h = stepHarness(afterFee('executing'));
    h.chain.authorizationUse = { transactionHash: '0xthird', blockNumber: 100, paidToMerchant: AMOUNT - 1n };
    const d = expectFailedAfterFee((await transferNotExecuted(h.ctx, 'reverted')) as StepResult, 'reverted');
    expect(d.authorization_used_by).toBe('0xthird');
  });
});

describe('a worker without the treasury key (the atomic path only)', () => {
  function keyless(settlement = settlementFixture({ state: 'check_allowance' }), mode: 'atomic' | 'sequential' = 'sequential') {
    const h = stepHarness(settlement, { overrides: { treasurySigns: false } });
    h.ctx.policy.networkPath = mode;
    return h;
  }

  it('settles atomically where the network has the atomic path: the key is not needed', async () => {
    const h = keyless(undefined, 'atomic');
    expect((await checkAllowance(h.ctx)).data).toEqual({ settlementMode: 'atomic' });
  });

  it('waits, nothing sent or reserved, while the network has no atomic path', async () => {
    const h = keyless();
    const result = await checkAllowanceStep(h.ctx);
    expect(result).toEqual({ wait: { reason: SettlementWaitReason.AtomicPathNotReady, detail: { network: 'eip155:84532', treasury: TREASURY } } });
    expect(h.log.filter((line) => line.startsWith('chain.'))).toEqual([]);
    expectNothingSent(h);
  });

  it('fails a wait that would outlive the authorization, nothing charged', async () => {
    const h = keyless(settlementFixture({ state: 'check_allowance' }, { validBefore: String(NOW + 10) }));
    const failure = details(await checkAllowance(h.ctx));
    expect(failure).toMatchObject({ reason: 'authorization expired while the atomic path was not set up on this network', path: 'sequential' });
    expectNothingSent(h);
  });

  it('fails at once a payment smaller than the fee (only the sequential path settles it), nothing charged', async () => {
    const h = keyless(settlementFixture({ state: 'check_allowance', amount: (FEE - 1n).toString() }), 'atomic');
    const failed = await checkAllowance(h.ctx);
    expect(failed.to).toBe('failed');
    expect(details(failed)).toMatchObject({ amount: (FEE - 1n).toString(), fee_amount: FEE.toString(), path: 'sequential' });
    expectNothingSent(h);
  });

  it('never sends a fee for a settlement another worker fixed on the sequential path', async () => {
    const h = keyless(settlementFixture({ state: 'collect_fee', settlementMode: 'sequential' }));
    const failed = await collectFee(h.ctx);
    expect(failed.to).toBe('failed');
    expect(details(failed)).toMatchObject({ reason: 'the sequential path sends the fee from the treasury, whose key this worker does not hold' });
    expect(h.log).not.toContain('db.claimSend');
    expectNothingSent(h);
  });
});

describe('a fee stored but not signed yet (a crash after its nonce was taken, a relayer server not done)', () => {
  const storedUnsigned = (settlement = settlementFixture({ state: 'collect_fee', settlementMode: 'sequential' }), overrides: NonNullable<Parameters<typeof stepHarness>[1]>['overrides'] = {}) => {
    const h = stepHarness(settlement, { overrides });
    h.transactions.unsigned.add(`${settlement.id}:fee`);
    return h;
  };

  it('is finished through the provider, never failed around, even once the authorization has expired', async () => {
    const h = storedUnsigned(settlementFixture({ state: 'collect_fee', settlementMode: 'sequential' }, { validBefore: String(NOW + 10) }));
    const result = await collectFee(h.ctx);
    expect(result.to).toBe('fee_collected');
    expect(h.log).toContain('tx.submit(fee)');
  });

  it('in a worker without the treasury key: the job fails to be retried (or parked), the settlement is not failed', async () => {
    const h = storedUnsigned(undefined, { treasurySigns: false });
    h.transactions.submitErrors.set('fee', new Error('no signing key for the treasury'));
    await expect(collectFeeStep(h.ctx)).rejects.toThrow('no signing key for the treasury');
  });
});
