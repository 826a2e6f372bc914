import type { ChainFamilyId } from '@facilitator/core';
import type { MechanismChain, PaymentReads } from './chain-port';
import type { PaymentMechanismId } from './mechanism-ids';
import type { ApprovalCapability, AvailabilityCapability, ExecutorCapability, GasCapability, NonceCapability, OfflineSignature, X402Capability } from './capabilities';

/** Where a mechanism's payments move: the network's chain and the token it settles. */
export interface MechanismNetwork {
  chainId: number;
  /** lowercase */
  tokenAddress: string;
}

/**
 * The on-chain identity of a nonce: the contract that records its use (`space`: the token for EIP-3009),
 * the payer, and the nonce as lowercase 0x bytes32. Two payments with one identity can never both execute.
 */
export interface NonceIdentity {
  space: string;
  payer: string;
  value: string;
}

/** What a payment is, whatever mechanism carries it: what verification, settlement and the routes read of it. */
export interface PaymentTerms {
  mechanism: PaymentMechanismId;
  scheme: string;
  /** lowercase addresses */
  payer: string;
  payee: string;
  /** the token it moves */
  token: string;
  /** the contract the payer lets move the tokens, when that is not the token itself (Permit2: x402's proxy) */
  spender?: string;
  amount: bigint;
  /** usable when validAfter < now < validBefore (seconds) */
  validAfter: bigint;
  validBefore: bigint;
  nonce: NonceIdentity;
  /**
   * The only address that may execute it (lowercase), when the payer named one: upto's witness binds the
   * facilitator, and its proxy reverts a call from anyone else. Absent: whoever sends its call.
   */
  sender?: string;
}

/** A stored payload: JSON of strings (numbers as decimal strings), as a jsonb column keeps it exactly. */
export type StoredPayload = { [key: string]: string | StoredPayload };

/** A payload read by its mechanism: its terms, the payload normalized, and the payer's signature. */
export interface ParsedPayment<Payload> {
  terms: PaymentTerms;
  payload: Payload;
  signature: string;
}

/** The payload's own names for the payer, payee and amount fields, and the contract that checks the signature. */
export interface MechanismVocabulary {
  payer: string;
  payee: string;
  amount: string;
  /** the field naming who may move the tokens, when the payload has one */
  spender?: string;
  checker: string;
}

/** An x402 extension a mechanism reads from a payment's `extensions` (`/x402/supported` lists its key). */
export interface X402Extension {
  key: string;
  /** the JSON schema of its `info`, which the request schemas check before the mechanism reads it */
  infoSchema: object;
}

/** What the payer lets a mechanism's contract move of a token: the spender and how much it may move now. */
export interface PayerApproval {
  token: string;
  spender: string;
  allowance: bigint;
  /**
   * The allowance the payment's own approval permit sets when it is sent with the payment (its nonce is the
   * token's next one now); absent when the payment carries none, or one the token would refuse.
   */
  permit?: bigint;
}

/**
 * The payer's EIP-2612 permit letting the spender a mechanism moves through (Permit2) take the token, sent
 * with a payment (x402's `eip2612GasSponsoring`): settlement submits it in the payment's own transaction
 * when the payer's allowance is short. Lowercase addresses and signature.
 */
export interface ApprovalPermit {
  owner: string;
  token: string;
  spender: string;
  /** the allowance it sets */
  value: bigint;
  nonce: bigint;
  /** the last second the token accepts it (inclusive) */
  deadline: bigint;
  /** 65 bytes: r, s, v */
  signature: string;
}

/**
 * What a payment can count on moving for `amount`: the payer's allowance when it covers the amount (the
 * permit is then not sent: it would overwrite a larger approval), else the allowance its permit sets, sent
 * with the payment (`withPermit`).
 */
export function approvalFor(approval: PayerApproval, amount: bigint): { allowance: bigint; withPermit: boolean } {
  if (approval.allowance >= amount || approval.permit === undefined) return { allowance: approval.allowance, withPermit: false };
  return { allowance: approval.permit, withPermit: true };
}

/** An approval that does not cover a payment: what it allows, and what the payment needs. */
export interface MissingApproval extends PayerApproval {
  required: bigint;
}

/** What `amount` lacks of an approval (its permit counted, as `approvalFor` counts it), if it lacks anything. */
export function approvalShortOf(approval: PayerApproval | undefined, amount: bigint): MissingApproval | undefined {
  return approval && approvalFor(approval, amount).allowance < amount ? { ...approval, required: amount } : undefined;
}

/**
 * The approval a payment needs and lacks for its signed amount (an upto maximum: what verify holds it to), if
 * its mechanism moves only what was approved and it is short.
 */
export async function missingApproval<Payload>(mechanism: PaymentMechanism<Payload>, payment: ParsedPayment<Payload>, chain: PaymentReads): Promise<MissingApproval | undefined> {
  return approvalShortOf(await mechanism.approval?.read(payment, chain), payment.terms.amount);
}

export type SignerRecovery = { ok: true; address: string } | { ok: false; reason: string };

/**
 * The function a direct call runs: what its gas was measured on and what a failed simulation of it is called.
 * Each mechanism names its own (the engine only reports it, never reads it).
 */
export type GasKind = string;

export type X402Version = 1 | 2;

/** The transaction that executes a payment. */
export interface DirectCall {
  to: string;
  data: string;
  gasKind: GasKind;
  /** the only address that may send it (lowercase): the payment's `terms.sender`. Absent: any of our relayers may. */
  sender?: string;
}

/**
 * What the amount a payer signed is: the amount settlement moves (`exact`), or the most it may move
 * (`maximum`: upto, where the merchant names the amount at settle). `settleAmountProblem` says which
 * amounts a payment allows.
 */
export type SignedAmount = 'exact' | 'maximum';

/** What the engine asks a direct call to settle: the amount to move (exact: the signed amount). */
export interface SettleOrder {
  amount: bigint;
  /**
   * Send the payment's approval permit with it, in the same transaction (`approvalFor` says when: the payer's
   * allowance is short). A payment without one throws.
   */
  withPermit?: boolean;
}

/** A log as a receipt carries it. */
export interface LogLike {
  address: string;
  topics: readonly string[];
  data: string;
}

/**
 * A transaction that executed a payment (ours or anyone's), with what it paid the payee of this payment;
 * or, where the chain shows the nonce spent and a transfer to the payee that may be this payment's but not
 * whose it is (a contract called the proxy: its calldata is not in the transaction), `unattributed`: the
 * engine must then neither report the payee paid nor the payment failed.
 */
export type Execution = { txHash: string; block: number; /** the transaction's target, lowercase */ to?: string; paidToPayee: bigint } | { unattributed: string };

/**
 * One way an x402 scheme moves a token (the reference registers a `SchemeNetworkFacilitator` per scheme
 * and network). It says facts about a payment and gives what the engine needs to check it; it never runs a
 * settlement: fee first, exactly once, batching and reorgs belong to the engine.
 *
 * A small core every mechanism has, in every chain family (what it claims and reads, its terms and identity,
 * how it is described), and capabilities a mechanism offers when its payments have them (how an EVM payment
 * executes, an offline-recoverable signature, a nonce space, an approval, a contract that may be missing,
 * executor targets, extra gas, x402 codes and extensions of its own): verification and settlement run the
 * check a capability stands for only when the mechanism offers it. Every EVM mechanism offers `evmExecution`,
 * `signature` and `nonce` (the conformance suite holds it), so those checks stay mandatory for an EVM payment;
 * a mechanism of another chain family (Solana) may have none of them.
 */
export interface PaymentMechanism<Payload> {
  // The core: what every mechanism says.

  readonly id: PaymentMechanismId;
  /** the chain family whose networks it settles on (a network serves the mechanisms of its family) */
  readonly family: ChainFamilyId;
  /** the x402 scheme it answers to */
  readonly scheme: string;
  /** the x402 versions whose payloads carry it (x402 v1 knows EIP-3009 only) */
  readonly x402Versions: readonly X402Version[];
  /** what `terms.amount` is: the amount that moves, or the most that may (the settle order's amount is checked against it) */
  readonly signedAmount: SignedAmount;
  /** whether a payload has this mechanism's shape: how the registry chooses among the mechanisms of one scheme */
  claims(payload: unknown): boolean;
  /**
   * A schema-checked payload, normalized (lowercase addresses, bigint numbers); throws InvalidRequestError
   * naming the path (under `path`) of a field that is not what it must be. `extensions`: the payment's x402
   * extensions (x402 v2 `paymentPayload.extensions`), where a mechanism reads what it settles with (Permit2:
   * the payer's approval permit); its fields are named under `path`'s parent's `extensions`.
   */
  parse(payload: unknown, path: string, network: MechanismNetwork, extensions?: unknown): ParsedPayment<Payload>;
  /**
   * The payload as it is stored with the payment (JSON, numbers as decimal strings): what settlement reads
   * back with `fromStored`, which gives the same payload.
   */
  toStored(payload: Payload): StoredPayload;
  /** a stored payload read back, with its terms on the network it was stored for (it was checked then) */
  fromStored(stored: unknown, network: MechanismNetwork): ParsedPayment<Payload>;
  /**
   * The stored payload of a payment kept before payloads were (a settlement an older process started during a
   * rolling deploy), rebuilt from its row's columns and its verification's validity and signature. Absent:
   * every payment of the mechanism has its payload stored.
   */
  storedFromColumns?(columns: PaymentColumns): StoredPayload;
  /**
   * How answers name what the payer signed and who checks it, so that a refusal speaks the payer's own
   * payload (EIP-3009: `authorization.from`, checked by the token).
   */
  readonly vocabulary: MechanismVocabulary;
  /**
   * The JSON schema of its payload (`paymentPayload.payload`), which the request schemas and the OpenAPI
   * document compose from the registry: a payload is checked against the schema of the one mechanism whose
   * `payloadMarker` it matches, so the errors speak the shape the client sent.
   */
  readonly payloadSchema: object;
  /**
   * The JSON schema a payload of its shape matches (absent: the default, a payload that matches no other
   * mechanism's marker). The markers of the mechanisms of one x402 version never both hold.
   */
  readonly payloadMarker?: object;
  /** the payment's identity: a hash of everything the payer signed (docs/decisions.md, "Payment identity") */
  fingerprint(payload: Payload, network: MechanismNetwork): string;
  /**
   * Its kind in `/x402/supported` on a network. `facilitator`: the address this service executes payments
   * from when a payer must name who may (upto's witness), which clients read from `extra`.
   */
  describe(network: MechanismNetwork, facilitator: string): { scheme: string; extra?: Record<string, unknown> };

  // The capabilities: each present when the mechanism's payments have it, and its check run only then.

  /**
   * how an EVM payment executes: the call a relayer sends, what a transaction paid the payee, who executed it
   * (every EVM mechanism has it; another family's mechanism executes its own way, e.g. the payer's own
   * Solana transaction)
   */
  readonly evmExecution?: EvmExecution<Payload>;
  /** a signature anyone can check offline: verification recovers the payer from it (every EVM mechanism has one) */
  readonly signature?: OfflineSignature<Payload>;
  /** a nonce space on chain: verification and settlement ask whether the payment's nonce is spent (every EVM mechanism has one) */
  readonly nonce?: NonceCapability;
  /** an approval the payer gives beforehand, which it moves no more than (Permit2) */
  readonly approval?: ApprovalCapability<Payload>;
  /** a contract it settles through that a chain may not have (x402's Permit2 proxies) */
  readonly availability?: AvailabilityCapability;
  /** the contracts its direct calls go to, as the settlement executor names them */
  readonly executor?: ExecutorCapability;
  /** gas its direct call runs beyond the network's transfer caps */
  readonly gas?: GasCapability;
  /** x402 reason codes and extensions of its own */
  readonly x402?: X402Capability;
}

/**
 * How an EVM payment executes, as settlement asks it. A nonce that is used is not a payment that was made:
 * "paid" is only ever read from a transfer to the payee (findExecution, paidIn).
 */
export interface EvmExecution<Payload> {
  /**
   * The call that executes the payment, sent by any of our relayers unless it names its `sender`. The
   * payer's signature goes in as the checking contract takes it: an ERC-6492 signature's inner one (the
   * wallet is deployed first, then checks its own signature). `settle` is the amount to move: a payment
   * whose signed amount is exact moves that amount without it (and refuses any other); one whose signed
   * amount is a maximum needs it. An amount the payment does not allow (`settleAmountProblem`) is thrown,
   * never settled as something else: the engine checks it first.
   */
  directCall(payment: ParsedPayment<Payload>, chain: MechanismChain, settle?: SettleOrder): DirectCall;
  /** what this payment paid its payee in a transaction that ran its direct call, from that transaction's logs */
  paidIn(logs: readonly LogLike[], payment: ParsedPayment<Payload>, network: MechanismNetwork): bigint;
  /** the transaction that executed this payment in the recent blocks (ours or anyone's); undefined: none did */
  findExecution(payment: ParsedPayment<Payload>, chain: MechanismChain): Promise<Execution | undefined>;
}

/** A payment's columns as a settlement row and its verification keep them (decimal strings, 0x hex). */
export interface PaymentColumns {
  payer: string;
  payee: string;
  amount: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
  signature: string;
}

/**
 * How an EVM mechanism's payment executes. A mechanism of another family has no EVM execution, and only the
 * EVM family's settlement steps ask (a settlement runs its network's family's steps): asked of one, it throws.
 */
export function evmExecutionOf<Payload>(mechanism: PaymentMechanism<Payload>): EvmExecution<Payload> {
  if (!mechanism.evmExecution) throw new Error(`mechanism ${mechanism.id} (${mechanism.family}) has no EVM execution`);
  return mechanism.evmExecution;
}
