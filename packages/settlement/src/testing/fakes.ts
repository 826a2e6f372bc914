// In-memory stand-ins for the chain, the transaction provider and the settlements table, for the unit
// tests of the steps and the settlement machine (no Postgres, Redis or anvil). Not exported by the package.
// Every fake appends to a shared call log, so a test can assert what happened before what.
import { wrapErc6492Signature, type AuthorizationUse, type FoundLog, type MinedTransaction, type SimulationOptions } from '@facilitator/evm-chain';
import {
  type NetworkFee,
  type SubmittedTransaction,
  type TransactionLog,
  type TransactionOutcome,
  type TransactionProvider,
  type TransactionRequest,
} from '@facilitator/evm-sending';
import { type TransactionPurpose } from '@facilitator/db';
import { transferWithAuthorizationData } from '@facilitator/payment-mechanisms';
import type { TransferAuthorization } from '@facilitator/core';
import { createHmac } from 'node:crypto';
import { WebhookEventMac, webhookEventRow, type NewWebhookEvent, type WebhookOutbox } from '@facilitator/webhooks';
import { AbiCoder, id, Interface } from 'ethers';
import { admissionDigest, hmacAdmission } from '../settlement-admission';
import type {
  FeeReservationRequest,
  FeeReverts,
  PayerInFlight,
  Settlement,
  SettlementRow,
  SettlementState,
  SettlementUpdate,
  TransitionRequest,
  Verification,
  WalletDeploymentRequest,
  WalletDeploymentReservation,
  WalletProbeAllowance,
  WebhookEventRow,
} from '@facilitator/db';
import { settlementRow, verificationRow } from '@facilitator/db/testing';
import type { SettlementAccounting } from '../accounting';
import type { SettlementMachineStore } from '../settlement-machine';
import type { DeploymentSimulation, ProbeTransaction, WalletDeploymentGuard } from '../wallet-deployment-guard';
import type { SettlementChain, SettlementNetwork, SettlementWithVerification, StepChain, StepContext, StepPolicy, StepRecords, StepSigners } from '../step';
import { OutcomeWaits } from '../outcome-waits';
import { type StepResult, isAwait, type StepAwait, isWait, type StepWait } from '../step-outcome';

export const CHAIN_ID = 84532;
export const TOKEN = '0x036cbd53842c5426634e7929541ec2318f3dcf7e';
export const PAYER = '0x1111111111111111111111111111111111111111';
export const MERCHANT = '0x2222222222222222222222222222222222222222';
export const TREASURY = '0x3333333333333333333333333333333333333333';
export const RELAYER_A = '0x4444444444444444444444444444444444444444';
export const RELAYER_B = '0x5555555555555555555555555555555555555555';
/** lowercase, as parseErc6492Signature reports it */
export const FACTORY = '0x6666666666666666666666666666666666666666';
/** Safe 1.4.1's canonical singleton: on the fixture network's implementation allowlist */
export const SINGLETON = '0x41675c099f32341bf84bfc5382af534df5c7461a';
/** createProxyWithNonce(SINGLETON, 0x, 1): what a Safe proxy factory is asked to deploy */
export const FACTORY_CALLDATA = new Interface(['function createProxyWithNonce(address,bytes,uint256)']).encodeFunctionData('createProxyWithNonce', [SINGLETON, '0x', 1n]);
export const NONCE = '0x' + 'ab'.repeat(32);
/** what authorizationFingerprint gives for the fixtures' payment; its value matters only as an identity */
export const PAYMENT_FINGERPRINT = 'f1'.repeat(32);
export const AMOUNT = 1_000_000n;
export const FEE = 10_000n;
/** Unix seconds */
export const NOW = 1_800_000_000;
/** a 65-byte ECDSA signature with v = 27 */
export const PLAIN_SIGNATURE = '0x' + 'a1'.repeat(32) + 'b2'.repeat(32) + '1b';
export const ERC6492_SIGNATURE = wrapErc6492Signature(FACTORY, FACTORY_CALLDATA, PLAIN_SIGNATURE);
export const GAS_CAPS = { fee: 100_000n, transfer: 150_000n, contractTransfer: 400_000n, walletDeploy: 1_000_000n };
/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** The ERC-20 Transfer log of `value` from `from` to `to`, as a receipt carries it. */
export function transferLog(from: string, to: string, value: bigint, token = TOKEN): TransactionLog {
  const word = (address: string) => '0x' + address.slice(2).toLowerCase().padStart(64, '0');
  return { address: token, topics: [TRANSFER_TOPIC, word(from), word(to)], data: '0x' + value.toString(16).padStart(64, '0') };
}

/** The calldata the fake chain encodes: readable, and distinct per argument. */
/** EIP-3009's transfer as its mechanism encodes it (the chain no longer does: the calldata is the mechanism's own). */
export function transferWithAuthorizationCalldata(auth: TransferAuthorization, signature: string): string {
  return transferWithAuthorizationData(auth, signature);
}

export function transferFromCalldata(from: string, to: string, value: bigint): string {
  return `transferFrom(${from},${to},${value})`;
}

/** The hash the fake chain gives block `n`. */
export function fakeBlockHash(n: number): string {
  return '0x' + n.toString(16).padStart(64, 'b');
}

/** The token as the steps see it; state set by the test, every read logged as `chain.<method>`. */
export class FakeChain implements SettlementChain {
  readonly tokenAddress = TOKEN;
  allowanceOf = 1_000n * FEE;
  balance = 1_000n * FEE;
  /** balances of particular accounts (lowercase); `balance` for the others */
  readonly balances = new Map<string, bigint>();
  authorizationUsed = false;
  readonly withCode = new Set<string>();
  /** estimate results by target address (the token unless given); 60,000 gas when not set */
  readonly estimates = new Map<string, { gas: bigint } | { revert: string }>();
  readonly estimateCalls: Array<{ from: string; data: string; to: string }> = [];
  /** the options each estimate ran with (its real transaction's gas limit and fee cap), by `to` */
  readonly estimateOptions: Array<{ to: string; options?: SimulationOptions }> = [];
  authorizationUse: AuthorizationUse | undefined;

  constructor(readonly log: string[] = []) {}

  async allowance(owner: string, spender: string): Promise<bigint> {
    this.log.push(`chain.allowance(${owner},${spender})`);
    return this.allowanceOf;
  }

  async balanceOf(account: string): Promise<bigint> {
    this.log.push(`chain.balanceOf(${account})`);
    return this.balances.get(account.toLowerCase()) ?? this.balance;
  }

  async isAuthorizationUsed(authorizer: string, nonce: string): Promise<boolean> {
    this.log.push(`chain.isAuthorizationUsed(${authorizer},${nonce})`);
    return this.authorizationUsed;
  }

  async hasCode(account: string): Promise<boolean> {
    this.log.push(`chain.hasCode(${account})`);
    return this.withCode.has(account.toLowerCase());
  }

  async estimate(from: string, data: string, to: string = this.tokenAddress, options?: SimulationOptions): Promise<{ gas: bigint } | { revert: string }> {
    this.log.push(`chain.estimate(${to})`);
    this.estimateCalls.push({ from, data, to });
    this.estimateOptions.push({ to, options });
    return this.estimates.get(to) ?? { gas: 60_000n };
  }

  async findAuthorizationUse(authorizer: string, nonce: string, merchant: string): Promise<AuthorizationUse | undefined> {
    this.log.push(`chain.findAuthorizationUse(${authorizer},${nonce},${merchant})`);
    return this.authorizationUse;
  }

  transferFromData(from: string, to: string, value: bigint): string {
    return transferFromCalldata(from, to, value);
  }

  // what a mechanism reads of contracts besides the token (Permit2): answers set by the test

  /** eth_call answers by `${to}:${data}`; a zero word when not set. x402's exact and upto proxies are deployed: each names Permit2 */
  readonly contractAnswers = new Map<string, string>([
    ['0x402085c248eea27d92e8b30b2c58ed07f9e20001:0x6afdd850', '0x' + '000000000022d473030f116ddee9f6b43ac78ba3'.padStart(64, '0')],
    ['0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002:0x6afdd850', '0x' + '000000000022d473030f116ddee9f6b43ac78ba3'.padStart(64, '0')],
  ]);
  /** the transactions recentLogs searches and minedTransaction returns */
  readonly mined = new Map<string, MinedTransaction>();

  async readContract(to: string, data: string): Promise<string> {
    this.log.push(`chain.readContract(${to})`);
    return this.contractAnswers.get(`${to}:${data}`) ?? '0x' + '0'.repeat(64);
  }

  async recentLogs(address: string, topics: ReadonlyArray<string | null>): Promise<FoundLog[]> {
    this.log.push(`chain.recentLogs(${address})`);
    const matches = (log: { address: string; topics: readonly string[] }) =>
      log.address.toLowerCase() === address.toLowerCase() && topics.every((topic, i) => topic === null || log.topics[i]?.toLowerCase() === topic.toLowerCase());
    return [...this.mined.values()].flatMap((tx) => tx.logs.filter(matches).map((log) => ({ ...log, transactionHash: tx.hash, blockNumber: tx.blockNumber })));
  }

  /** the chain's newest block: a transaction of block 101 (the fakes' outcomes) has 1 confirmation */
  headBlock = 101;

  async head(): Promise<number> {
    this.log.push('chain.head()');
    return this.headBlock;
  }

  async minedTransaction(hash: string): Promise<MinedTransaction | undefined> {
    this.log.push(`chain.minedTransaction(${hash})`);
    // the transaction findAuthorizationUse reports is mined, in its block, unless the test says otherwise
    const use = this.authorizationUse;
    const found =
      this.mined.get(hash) ??
      (use?.transactionHash === hash ? { hash, blockNumber: use.blockNumber, data: '0x', succeeded: true, logs: [], ...(use.to ? { to: use.to } : {}) } : undefined);
    return found && { blockHash: fakeBlockHash(found.blockNumber), ...found };
  }
}

/** a transaction's outcome; a promise is a block still to come */
type OutcomeOf = (tx: SubmittedTransaction) => TransactionOutcome | Promise<TransactionOutcome>;

export const confirmed =
  (logs: TransactionLog[] = []): OutcomeOf =>
  (tx) => ({ status: 'confirmed', hash: tx.hash, blockNumber: 101, logs });

/**
 * What a fixture's transfer leaves in its receipt unless a test says otherwise: the token's Transfer of the
 * amount from the payer to the merchant, and right after it x402's exact proxy's Settled() (which a Permit2
 * payment's execution carries; an EIP-3009 one's reading ignores it).
 */
const PAID_LOGS: TransactionLog[] = [
  { ...transferLog(PAYER, MERCHANT, AMOUNT) },
  { address: '0x402085c248eea27d92e8b30b2c58ed07f9e20001', topics: [id('Settled()')], data: '0x' },
];

export const reverted =
  (reason?: string): OutcomeOf =>
  (tx) => ({ status: 'reverted', hash: tx.hash, blockNumber: 101, ...(reason === undefined ? {} : { reason }) });

/**
 * The TransactionProvider contract in memory: one transaction per (settlementId, purpose), however often
 * submitted. Outcomes are confirmed unless set per purpose; every call is logged as `tx.<method>(purpose)`.
 */
export class FakeTransactions implements TransactionProvider {
  /** every request that reached the provider and was sent (not the ones refused by `submitErrors`) */
  readonly sent: TransactionRequest[] = [];
  readonly waits: Array<{ id: string; confirmations: number }> = [];
  readonly outcomes = new Map<TransactionPurpose, OutcomeOf>();
  /** thrown by `submit` for that purpose instead of sending (e.g. TransactionWouldRevertError) */
  readonly submitErrors = new Map<TransactionPurpose, Error>();
  /** run when a transaction of that purpose is mined (e.g. the wallet's code appears) */
  readonly onMined = new Map<TransactionPurpose, () => void>();
  /** keys whose nonce was stored but never signed: hasAny says yes, find says no */
  readonly unsigned = new Set<string>();
  private readonly stored = new Map<string, SubmittedTransaction & { purpose: TransactionPurpose }>();
  private nonce = 0n;
  /** what networkFee reports: 1 gwei base fee under a 100 gwei cap unless a test raises it */
  fee: NetworkFee = { baseFeePerGas: 1_000_000_000n, maxFeePerGasCap: 100_000_000_000n, aboveCap: false };

  constructor(readonly log: string[] = []) {}

  static hashOf(settlementId: string, purpose: TransactionPurpose): string {
    return `0x${purpose}-${settlementId}`;
  }

  /** A transaction already sent for this key, as after a crash. */
  seed(settlementId: string, purpose: TransactionPurpose, from = TREASURY): SubmittedTransaction {
    const hash = FakeTransactions.hashOf(settlementId, purpose);
    const tx = { id: `tx_${purpose}_${settlementId}`, from, nonce: this.nonce++, hash, hashes: [hash], purpose };
    this.stored.set(key(settlementId, purpose), tx);
    return tx;
  }

  async submit(request: TransactionRequest): Promise<SubmittedTransaction> {
    this.log.push(`tx.submit(${request.purpose})`);
    const existing = this.stored.get(key(request.settlementId, request.purpose));
    if (existing) return existing;
    const error = this.submitErrors.get(request.purpose);
    if (error) throw error;
    this.sent.push(request);
    return this.seed(request.settlementId, request.purpose, request.from);
  }

  async find(settlementId: string, purpose: TransactionPurpose): Promise<SubmittedTransaction | null> {
    this.log.push(`tx.find(${purpose})`);
    return this.stored.get(key(settlementId, purpose)) ?? null;
  }

  async hasAny(settlementId: string, purpose: TransactionPurpose): Promise<boolean> {
    this.log.push(`tx.hasAny(${purpose})`);
    return this.stored.has(key(settlementId, purpose)) || this.unsigned.has(key(settlementId, purpose));
  }

  async waitForOutcome(transactionId: string, confirmations: number): Promise<TransactionOutcome> {
    const tx = [...this.stored.values()].find((t) => t.id === transactionId);
    if (!tx) throw new Error(`no transaction ${transactionId}`);
    this.log.push(`tx.waitForOutcome(${tx.purpose})`);
    this.waits.push({ id: transactionId, confirmations });
    const outcome = await (this.outcomes.get(tx.purpose) ?? (tx.purpose === 'transfer' ? confirmed(PAID_LOGS) : confirmed()))(tx);
    this.onMined.get(tx.purpose)?.();
    return outcome;
  }

  async networkFee(chainId: number): Promise<NetworkFee> {
    this.log.push(`tx.networkFee(${chainId})`);
    return this.fee;
  }

  sentFor(purpose: TransactionPurpose): TransactionRequest[] {
    return this.sent.filter((r) => r.purpose === purpose);
  }
}

function key(settlementId: string, purpose: TransactionPurpose): string {
  return `${settlementId}:${purpose}`;
}

/** What the fixtures' verification and settlement agree on. */
const fixturePayment = {
  surface: 'v1',
  chainId: CHAIN_ID,
  tokenAddress: TOKEN,
  payer: PAYER,
  merchant: MERCHANT,
  amount: AMOUNT.toString(),
  nonce: NONCE,
  authorizationFingerprint: PAYMENT_FINGERPRINT,
  nonceSpace: TOKEN,
};

/** The EIP-3009 payload stored with a verification, as its columns say (a test that changes a column changes it too). */
function storedPayloadOf(v: Verification): Verification['payload'] {
  return {
    authorization: { from: v.payer, to: v.merchant, value: v.amount, validAfter: v.validAfter, validBefore: v.validBefore, nonce: v.nonce },
    signature: v.signature,
  };
}

/** The fixtures' verified payment (PAYER to MERCHANT, valid for an hour from NOW); `overrides` change it. */
export function verificationFixture(overrides: Partial<Verification> = {}): Verification {
  const at = new Date(NOW * 1000);
  const row = verificationRow({
    ...fixturePayment,
    id: 'ver_1',
    network: 'eip155:84532',
    expectedAmount: AMOUNT.toString(),
    validAfter: '0',
    validBefore: String(NOW + 3600),
    signature: PLAIN_SIGNATURE,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  });
  return 'payload' in overrides ? row : { ...row, payload: storedPayloadOf(row) };
}

/** A pending settlement of the fixtures' payment, with its verification. */
export function settlementFixture(
  overrides: Partial<Settlement> = {},
  verification: Partial<Verification> = {},
): SettlementWithVerification {
  const at = new Date(NOW * 1000);
  const settlement = settlementRow({
    ...fixturePayment,
    id: 'stl_1',
    verificationId: 'ver_1',
    paymentKey: `${CHAIN_ID}:${TOKEN}:${PAYER}:${NONCE}`,
    state: 'pending',
    feeAmount: FEE.toString(),
    createdAt: at,
    updatedAt: at,
    ...overrides,
  });
  const verified = verificationFixture(verification);
  // the payment it executes, as the settle intake stores it: what its row pays, under its verification's
  // validity and signature (a test that changes either changes it too), unless the test gives its own
  const payload = storedPayloadOf({ ...verified, payer: settlement.payer, merchant: settlement.merchant, amount: settlement.amount, nonce: settlement.nonce });
  const full = { ...settlement, ...('payload' in overrides ? {} : { payload }), verification: verified };
  // as the worker's pre-flight left it (sealed with TEST_ADMISSION), unless the test gives its own
  return { ...full, admission: 'admission' in overrides ? (overrides.admission ?? null) : testSealOf(full) };
}

const testAdmissionMac = (digest: Uint8Array): string => createHmac('sha256', 'test admission key').update(digest).digest('hex');
/** The seal TEST_ADMISSION makes for this settlement (what the harness's pre-flight writes). */
export const testSealOf = (settlement: Settlement): string => testAdmissionMac(admissionDigest(settlement));
/** The admission the step harness's worker seals and verifies with (settlementFixture rows carry its seal). */
export const TEST_ADMISSION = hmacAdmission(testAdmissionMac);

/** the fixtures' Permit2 payment's nonce: word 5, bit 3 of the payer's unordered nonces */
export const PERMIT2_NONCE = (5n << 8n) + 3n;

/**
 * The fixtures' payment (PAYER to MERCHANT, AMOUNT of TOKEN, until an hour from NOW) signed for x402's exact
 * proxy through Permit2 instead: its row carries Permit2's nonce space and the nonce as bytes32.
 */
export function permit2SettlementFixture(overrides: Partial<Settlement> = {}): SettlementWithVerification {
  const permit2 = '0x000000000022d473030f116ddee9f6b43ac78ba3';
  const payload = {
    permit2Authorization: {
      from: PAYER,
      permitted: { token: TOKEN, amount: AMOUNT.toString() },
      spender: '0x402085c248eea27d92e8b30b2c58ed07f9e20001',
      nonce: PERMIT2_NONCE.toString(),
      deadline: String(NOW + 3600),
      witness: { to: MERCHANT, validAfter: '0' },
    },
    signature: PLAIN_SIGNATURE,
  };
  const nonce = '0x' + PERMIT2_NONCE.toString(16).padStart(64, '0');
  const settlement = settlementFixture({ mechanism: 'exact/permit2', nonceSpace: permit2, nonce, payload, ...overrides });
  return { ...settlement, verification: { ...settlement.verification, mechanism: 'exact/permit2', nonceSpace: permit2, nonce, payload } };
}

/**
 * An upto settlement through Permit2: the payer signed `AMOUNT` at most, with the treasury as the witness's
 * facilitator; the row settles `amount` of it, charged `feeAmount`.
 */
export function uptoSettlementFixture(amount: bigint, overrides: Partial<Settlement> = {}): SettlementWithVerification {
  const exact = permit2SettlementFixture();
  const stored = exact.payload as { permit2Authorization: Record<string, unknown>; signature: string };
  const payload = {
    ...stored,
    permit2Authorization: { ...stored.permit2Authorization, spender: '0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002', witness: { to: MERCHANT, facilitator: TREASURY, validAfter: '0' } },
  };
  const upto = { mechanism: 'upto/permit2', scheme: 'upto', payload };
  const settlement = {
    ...exact,
    ...upto,
    amount: amount.toString(),
    ...overrides,
    verification: { ...exact.verification, ...upto, amount: AMOUNT.toString(), expectedAmount: AMOUNT.toString() },
  };
  return 'admission' in overrides ? settlement : { ...settlement, admission: testSealOf(settlement) };
}

export function networkFixture(chain: SettlementChain): SettlementNetwork<SettlementChain> {
  return {
    chainId: CHAIN_ID,
    family: 'evm',
    caip2: 'eip155:84532',
    rpcUrl: 'http://127.0.0.1:9',
    confirmations: 2,
    usdc: chain,
    gasCaps: GAS_CAPS,
    walletFactories: [FACTORY],
    walletImplementations: [SINGLETON],
  };
}

/** The wallet-deployment checks in memory: the probe's answer and the limits' verdict are set by the test. */
export class FakeWalletDeployments implements WalletDeploymentGuard {
  /** what the deploy-then-transfer simulation answers: by default both pass */
  simulation: DeploymentSimulation = { deployGas: 250_000n, transferGas: 90_000n };
  /** what a factory's implementation() answers */
  implementation = SINGLETON;
  reservation: WalletDeploymentReservation = { reserved: true };
  /** what the probe budgets answer */
  probes: WalletProbeAllowance = { allowed: true };
  readonly reserved: WalletDeploymentRequest[] = [];
  readonly released: string[] = [];
  readonly failedProbes: WalletDeploymentRequest[] = [];
  /** the real transaction each probe ran as */
  readonly probeTransactions: ProbeTransaction[] = [];

  constructor(private readonly log: string[] = []) {}

  async simulateDeployment(_chainId: number, _from: string, _request: unknown, tx: ProbeTransaction): Promise<DeploymentSimulation> {
    this.log.push('guard.simulateDeployment');
    this.probeTransactions.push(tx);
    return this.simulation;
  }

  async probeAllowance(): Promise<WalletProbeAllowance> {
    this.log.push('guard.probeAllowance');
    return this.probes;
  }

  async recordFailedProbe(request: WalletDeploymentRequest): Promise<void> {
    this.log.push('guard.recordFailedProbe');
    this.failedProbes.push(request);
  }

  async call(): Promise<string> {
    this.log.push('guard.call');
    return AbiCoder.defaultAbiCoder().encode(['address'], [this.implementation]);
  }

  async release(settlementId: string): Promise<void> {
    this.log.push('guard.release');
    this.released.push(settlementId);
  }

  async reserve(request: WalletDeploymentRequest): Promise<WalletDeploymentReservation> {
    this.log.push('guard.reserve');
    this.reserved.push(request);
    return this.reservation;
  }
}

/** What the failure accounting reads, set by the test; every read logged as `db.<method>` or `merchants.minimumFor`. */
export class FakeAccounting {
  payerFailures: FeeReverts = { count: 0, lastAt: null };
  merchantFailures: FeeReverts = { count: 0, lastAt: null };
  paidBefore = false;
  /** the merchant's own minimum or MIN_PAYMENT_AMOUNT; undefined: neither is set (the settlement's fee is the minimum) */
  minimum: bigint | undefined = 0n;
  unfinishedTreasuryTransactions = 0;

  constructor(readonly log: string[] = []) {}

  context(overrides: Partial<SettlementAccounting> = {}): SettlementAccounting {
    return {
      pause: { payerAfterFailures: 3, merchantAfterFailures: 10, windowMs: 3_600_000 },
      counts: {
        failuresOfPayment: async (payer, merchant, chainId) => {
          this.log.push(`db.failuresOfPayment(${payer},${merchant},${chainId})`);
          return { payer: this.payerFailures, merchant: this.merchantFailures };
        },
        hasPaid: async (payer, merchant) => {
          this.log.push(`db.hasPaid(${payer},${merchant})`);
          return this.paidBefore;
        },
      },
      minimumFor: async (merchant) => {
        this.log.push(`merchants.minimumFor(${merchant})`);
        return this.minimum;
      },
      contractPayerMaxInFlight: 1,
      sequentialContractPayers: 'refuse',
      unfinishedTransactionsOf: async (chainId, from) => {
        this.log.push(`db.unfinishedTransactionsOf(${chainId},${from})`);
        return this.unfinishedTreasuryTransactions;
      },
      ...overrides,
    };
  }
}

export interface StepHarness {
  ctx: StepContext;
  chain: FakeChain;
  transactions: FakeTransactions;
  log: string[];
  /** the `since` of every feeRevertsOfMerchant call */
  feeRevertQueries: Date[];
  walletDeployments: FakeWalletDeployments;
  /** set only with `options.accounting` */
  accounting?: FakeAccounting;
}

/** A step's answer for the tests that expect it to move on: a wait, or an await of a transaction, fails them. */
export function moved(result: StepResult | StepWait | StepAwait): StepResult {
  if (isWait(result)) throw new Error(`unexpected wait: ${JSON.stringify(result.wait)}`);
  if (isAwait(result)) throw new Error(`unexpected await of transaction ${result.awaiting.transactionId}`);
  return result;
}

/** Any member of a step context's groups, named flat: what a test overrides (the harness puts each in its group). */
type StepContextOverrides = Partial<StepChain & StepSigners & StepPolicy & StepRecords>;

const CHAIN_MEMBERS = ['transactions', 'outcomes', 'codeAt', 'atomic'] as const;
const SIGNER_MEMBERS = ['relayers', 'nextRelayer', 'anyFundedRelayer', 'treasury', 'treasurySigns', 'admission'] as const;
const POLICY_MEMBERS = ['networkPath', 'feeAmount', 'executorFee', 'expiryMarginSeconds', 'now', 'merchantPause', 'accounting', 'walletDeployments'] as const;
const RECORD_MEMBERS = ['claimSend', 'claimTransfer', 'feeRevertsOfMerchant'] as const;

function pick(flat: Record<string, unknown>, members: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(members.filter((m) => flat[m] !== undefined).map((m) => [m, flat[m]]));
}

/** A step context over fakes; `feeReverts` is what feeRevertsOfMerchant reports. */
export function stepHarness(
  settlement: SettlementWithVerification = settlementFixture(),
  options: { feeReverts?: FeeReverts; overrides?: StepContextOverrides; accounting?: boolean | Partial<SettlementAccounting> } = {},
): StepHarness {
  const log: string[] = [];
  const accounting = options.accounting ? new FakeAccounting(log) : undefined;
  const chain = new FakeChain(log);
  const transactions = new FakeTransactions(log);
  const relayers = [RELAYER_A, RELAYER_B];
  let turn = 0;
  const feeRevertQueries: Date[] = [];
  const walletDeployments = new FakeWalletDeployments(log);
  const flat: Record<string, unknown> = {
    transactions,
    outcomes: new OutcomeWaits(transactions),
    // unmemoized here: every ask shows in the chain's log
    codeAt: (address: string) => chain.hasCode(address),
    relayers,
    nextRelayer: async () => relayers[turn++ % relayers.length],
    anyFundedRelayer: async () => true,
    treasury: TREASURY,
    treasurySigns: true,
    admission: TEST_ADMISSION,
    networkPath: 'sequential',
    // as the machine does: the row's own fee, and the fee this worker's executor takes
    feeAmount: BigInt(settlement.feeAmount),
    executorFee: FEE,
    expiryMarginSeconds: 30,
    now: () => NOW,
    merchantPause: { afterReverts: 3, windowMs: 600_000 },
    walletDeployments,
    ...(accounting ? { accounting: accounting.context(options.accounting === true ? {} : (options.accounting as Partial<SettlementAccounting>)) } : {}),
    claimSend: async () => {
      log.push('db.claimSend');
      return true;
    },
    claimTransfer: async () => {
      log.push('db.claimTransfer');
      return true;
    },
    feeRevertsOfMerchant: async (merchant: string, chainId: number, since: Date) => {
      log.push(`db.feeRevertsOfMerchant(${merchant},${chainId})`);
      feeRevertQueries.push(since);
      return options.feeReverts ?? { count: 0, lastAt: null };
    },
    ...options.overrides,
  };
  const ctx: StepContext = {
    settlement,
    network: networkFixture(chain),
    chain: pick(flat, CHAIN_MEMBERS) as unknown as StepChain,
    signers: pick(flat, SIGNER_MEMBERS) as unknown as StepSigners,
    policy: pick(flat, POLICY_MEMBERS) as unknown as StepPolicy,
    records: pick(flat, RECORD_MEMBERS) as unknown as StepRecords,
  };
  return { ctx, chain, transactions, log, feeRevertQueries, walletDeployments, ...(accounting ? { accounting } : {}) };
}

/**
 * The settlements table in memory, held to SettlementStore by settlementStoreContract (run against
 * both): the compare-and-set transition (only from the state the caller read), the fee reservation (the
 * merchant's fees in flight plus this one within allowance and balance; the payer's value in flight plus
 * this one within its balance, under its cap and its pause), the claim to send, waits and attention.
 * What other settlements contribute is read from `rows`, plus what a test sets in `inFlight`,
 * `payerInFlight` and `feeReverts` for settlements it does not hold as rows.
 */
export class FakeSettlementStore implements SettlementMachineStore {
  readonly rows = new Map<string, SettlementWithVerification>();
  readonly transitions: Array<{ id: string; from: string; to: string; data?: SettlementUpdate; note?: Record<string, unknown> }> = [];
  readonly reservations: FeeReservationRequest[] = [];
  readonly events: WebhookEventRow[] = [];
  readonly attention = new Map<string, string>();
  /** fees of the merchant's other settlements in collect_fee, beyond those in `rows` */
  inFlight = 0n;
  /** the payer's other settlements in the sending states (and its costly failures), beyond those in `rows` */
  payerInFlight: PayerInFlight = { value: 0n, items: 0 };
  /** the merchant's reverted fee transfers, beyond those in `rows` */
  feeReverts: FeeReverts = { count: 0, lastAt: null };
  /** run before the next transition's compare-and-set, e.g. another worker moving the row first */
  beforeNextTransition: (() => void) | undefined;

  constructor(readonly log: string[] = []) {}

  add(settlement: SettlementWithVerification): void {
    this.rows.set(settlement.id, settlement);
  }

  async findWithVerification(id: string): Promise<SettlementWithVerification | null> {
    this.log.push(`db.findWithVerification`);
    const row = this.rows.get(id);
    return row ? { ...row } : null;
  }

  async clearAttention(id: string): Promise<SettlementRow | null> {
    this.log.push(`db.clearAttention`);
    const row = this.rows.get(id);
    if (!row) return null;
    this.attention.delete(id);
    const cleared = { ...row, attentionAt: null, attentionReason: null, updatedAt: new Date() };
    this.rows.set(id, cleared);
    return withoutVerification(cleared);
  }

  async markNeedsAttention(id: string, reason: string): Promise<void> {
    this.log.push(`db.markNeedsAttention`);
    this.attention.set(id, reason);
    const row = this.rows.get(id);
    if (row) this.rows.set(id, { ...row, attentionReason: reason.slice(0, 1000), attentionAt: new Date(), updatedAt: new Date() });
  }

  async markWaiting(id: string, state: SettlementState, reason: string, detail: object): Promise<boolean> {
    this.log.push(`db.markWaiting(${reason})`);
    const row = this.rows.get(id);
    if (!row || row.state !== state) return false;
    const same = row.waitingReason === reason;
    this.rows.set(id, {
      ...row,
      waitingReason: reason,
      waitingSince: same ? row.waitingSince : new Date(),
      waitingDetail: JSON.parse(JSON.stringify(detail)),
      updatedAt: same ? row.updatedAt : new Date(),
    });
    return true;
  }

  async transition(request: TransitionRequest): Promise<SettlementRow | null> {
    this.log.push(`db.transition(${[request.from, ...(request.through ?? []).map((hop) => hop.state), request.to].join('->')})`);
    const moved = this.apply(request);
    if (moved && request.event) {
      const event = request.event(moved);
      if (event) this.events.push(event);
    }
    return moved;
  }

  async claimTransfer(id: string): Promise<boolean> {
    this.log.push('db.claimTransfer');
    const row = this.rows.get(id);
    if (!row || row.state === 'settled' || row.state === 'failed' || row.transferDecision === 'withheld') return false;
    this.rows.set(id, { ...row, transferDecision: 'send' });
    return true;
  }

  async claimSend(id: string): Promise<boolean> {
    this.log.push('db.claimSend');
    const row = this.rows.get(id);
    if (!row || row.state === 'settled' || row.state === 'failed') return false;
    this.rows.set(id, { ...row, sendClaimedAt: row.sendClaimedAt ?? new Date() });
    return true;
  }

  async transitionReservingFee(
    request: TransitionRequest,
    reservation: FeeReservationRequest,
  ): Promise<{ moved: SettlementRow | null; inFlight: bigint; payer?: PayerInFlight }> {
    this.log.push(`db.transitionReservingFee(${request.from}->${request.to})`);
    this.reservations.push(reservation);
    const inFlight = this.feesInFlight(request.id, reservation);
    const p = reservation.payer;
    const payer = p ? this.payerInFlightOf(request.id, reservation, p.address, p.pause?.since ?? new Date()) : undefined;
    const result = (moved: SettlementRow | null) => ({ moved, inFlight, ...(payer ? { payer } : {}) });
    const spendable = reservation.allowance < reservation.balance ? reservation.allowance : reservation.balance;
    if (inFlight + reservation.fee > spendable) return result(null);
    if (p && payer) {
      const paused = p.pause !== undefined && payer.failures! >= p.pause.afterFailures;
      if (paused || payer.value + p.value > p.balance || (p.maxInFlight !== undefined && payer.items >= p.maxInFlight)) return result(null);
    }
    return result(this.apply(request));
  }

  async feeRevertsOfMerchant(merchant: string, chainId: number, since: Date): Promise<FeeReverts> {
    this.log.push(`db.feeRevertsOfMerchant(${merchant},${chainId})`);
    // as FEE_REVERTS_OF_MERCHANT: a fee transfer that was sent and reverted
    const reverts = [...this.rows.values()].filter(
      (r) => r.merchant === merchant && r.chainId === chainId && r.state === 'failed' && r.errorCode === 'fee_collection_failed' && r.feeTxHash !== null && r.updatedAt > since,
    );
    return { count: this.feeReverts.count + reverts.length, lastAt: latest([this.feeReverts.lastAt, ...reverts.map((r) => r.updatedAt)]) };
  }

  /** settlement_fees_in_flight_locked: the fees of the merchant's other settlements in collect_fee. */
  private feesInFlight(id: string, reservation: FeeReservationRequest): bigint {
    return [...this.rows.values()]
      .filter((r) => r.id !== id && r.merchant === reservation.merchant && r.chainId === reservation.chainId && r.tokenAddress === reservation.tokenAddress && r.state === 'collect_fee')
      .reduce((sum, r) => sum + BigInt(r.feeAmount), this.inFlight);
  }

  /** settlement_payer_in_flight_locked: the payer's other settlements in the sending states, and its costly failures since `since`. */
  private payerInFlightOf(id: string, reservation: FeeReservationRequest, payer: string, since: Date): Required<PayerInFlight> {
    const rows = [...this.rows.values()].filter((r) => r.payer === payer && r.chainId === reservation.chainId);
    const sending = rows.filter((r) => r.id !== id && r.tokenAddress === reservation.tokenAddress && SENDING_STATES.includes(r.state));
    const failures = rows.filter((r) => r.updatedAt > since && costlyFailure(r));
    return {
      value: sending.reduce((sum, r) => sum + BigInt(r.amount), this.payerInFlight.value),
      items: this.payerInFlight.items + sending.length,
      failures: (this.payerInFlight.failures ?? 0) + failures.length,
      lastFailureAt: latest([this.payerInFlight.lastFailureAt ?? null, ...failures.map((r) => r.updatedAt)]),
    };
  }

  private apply(request: TransitionRequest): SettlementRow | null {
    const hook = this.beforeNextTransition;
    this.beforeNextTransition = undefined;
    hook?.();
    const row = this.rows.get(request.id);
    if (!row || row.state !== request.from) return null;
    if (request.onlyUnclaimed && (row.sendClaimedAt || row.waitingReason === 'execution_confirming')) return null;
    const { errorDetails, ...fields } = request.data ?? {};
    const next: SettlementWithVerification = {
      ...row,
      ...fields,
      // stored as jsonb: what comes back is the JSON of what was written
      ...(errorDetails === undefined ? {} : { errorDetails: JSON.parse(JSON.stringify(errorDetails)) as Settlement['errorDetails'] }),
      state: request.to,
      waitingReason: null,
      waitingSince: null,
      waitingDetail: null,
      updatedAt: new Date(),
    };
    this.rows.set(request.id, next);
    // one history row per step, as the repository writes them; the fields go with the last
    let from = request.from;
    for (const hop of request.through ?? []) {
      this.transitions.push({ id: request.id, from, to: hop.state, note: hop.note });
      from = hop.state;
    }
    this.transitions.push({ id: request.id, from, to: request.to, data: request.data, note: request.note });
    return withoutVerification(next);
  }
}

/** The states that send money: a payer's settlement in one of them has its value in flight. */
const SENDING_STATES: readonly SettlementState[] = ['collect_fee', 'fee_collected', 'executing'];

/**
 * The SQL function settlement_costly_failure (migration 20261124150300): a failure on chain that cost us
 * or the merchant something and that the payer caused.
 */
function costlyFailure(r: Settlement): boolean {
  const details = (r.errorDetails !== null && typeof r.errorDetails === 'object' && !Array.isArray(r.errorDetails) ? r.errorDetails : {}) as Record<string, unknown>;
  const sent = r.feeTxHash !== null || r.settlementTxHash !== null || 'tx_hash' in details || 'wallet_deploy_tx_hash' in details;
  return (
    r.state === 'failed' &&
    r.errorCode === 'settlement_failed' &&
    !r.merchantPaid &&
    String(details.merchant_paid ?? '') !== 'true' &&
    sent &&
    !String(details.reason ?? '').startsWith('settle transaction reverted')
  );
}

function latest(dates: Array<Date | null>): Date | null {
  return dates.reduce<Date | null>((a, b) => (b !== null && (a === null || b > a) ? b : a), null);
}

function withoutVerification(row: SettlementWithVerification): SettlementRow {
  const { verification: _verification, ...settlement } = row;
  return settlement;
}

/** The machine's webhook outbox: records the event ids it was asked to enqueue. */
export class FakeOutbox {
  readonly enqueued: string[] = [];

  constructor(readonly log: string[] = []) {}

  async enqueue(eventId: string): Promise<void> {
    this.log.push(`outbox.enqueue`);
    this.enqueued.push(eventId);
  }

  row(event: NewWebhookEvent): ReturnType<WebhookOutbox['row']> {
    return webhookEventRow(event, TEST_EVENT_MAC);
  }
}

/** The MAC the fake outbox's event rows carry. */
export const TEST_EVENT_MAC = new WebhookEventMac('test webhook secret');
