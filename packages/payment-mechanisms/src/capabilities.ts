import type { PaymentReads } from './chain-port';
import type { ApprovalPermit, MechanismNetwork, NonceIdentity, ParsedPayment, PayerApproval, SignerRecovery, X402Extension } from './mechanism';
import type { MechanismX402Reasons } from './x402-reasons';

// The optional capabilities of a payment mechanism (`PaymentMechanism`): what a mechanism's payments have
// beyond the core, each checked by verification and settlement only when the mechanism offers it.

/**
 * An offline-recoverable signature: the digest the payer signed and the signer the checking contract
 * recovers from it. Verification runs its check (the payer signed this payment) when a mechanism has it.
 */
export interface OfflineSignature<Payload> {
  /**
   * The EIP-712 domain separator its signatures are made under, when the checking contract is not the
   * token (Permit2's is fixed by chain and address); absent: the token's own, which the chain reader pins.
   */
  ownDomainSeparator?(network: MechanismNetwork): Uint8Array;
  /** the digest the payer signed, under the EIP-712 domain separator of the contract that checks it */
  signedDigest(payload: Payload, domainSeparator: Uint8Array): Uint8Array;
  /** the signer of a digest as the checking contract recovers it, with its refusals */
  recoverSigner(digest: Uint8Array, signature: string): SignerRecovery;
}

/** A nonce space: the contract that records a payment's nonce (`NonceIdentity.space`), and whether one is spent. */
export interface NonceCapability {
  /** the contract that records its payments' nonces on a network (`NonceIdentity.space`) */
  space(network: MechanismNetwork): string;
  /** whether the nonce can never execute again: used, or cancelled (invalidated) by its payer */
  isUsed(nonce: NonceIdentity, chain: PaymentReads): Promise<boolean>;
}

/**
 * What the payer has approved beforehand for the mechanism to move, when it moves only that: Permit2 takes
 * no more than the payer's allowance to it on the token. One approval backs every payment of the payer's in
 * flight: settlement reserves against it as against the payer's balance.
 */
export interface ApprovalCapability<Payload> {
  /** the contract a payer approves on the token for this mechanism (Permit2): an approval permit must name it */
  readonly spender: string;
  /**
   * The spender a payment must name in what the payer signed: the contract settlement executes it through. A
   * permit for any other spender could be taken by whoever controls that spender, never by us.
   */
  readonly signedSpender: string;
  /** the payer's approval now, its permit counted (`PayerApproval.permit`) */
  read(payment: ParsedPayment<Payload>, chain: PaymentReads): Promise<PayerApproval>;
  /**
   * The permit for that approval the payment carries, if any (Permit2: the payer's EIP-2612 permit for
   * Permit2, x402's `eip2612GasSponsoring`): verification checks it, `read` counts it, and settlement
   * sends it with the payment when the payer's allowance is short (`SettleOrder.withPermit`).
   */
  permit?(payload: Payload): ApprovalPermit | undefined;
}

/** A contract it settles through that a chain may lack. */
export interface AvailabilityCapability {
  /**
   * Why it cannot execute on this chain at all, when it cannot: a contract it settles through is missing.
   * Asked before any fee: a call to a missing contract succeeds and moves nothing.
   */
  unavailable(chain: PaymentReads): Promise<string | undefined>;
}

/** The settlement executor's view of a mechanism. */
export interface ExecutorCapability {
  /**
   * The contracts its direct calls go to, by the settlement executor's immutable naming each (the executor
   * refuses a call to any other): what settlement lets an executor item call, and what an executor is set up with.
   */
  targets(network: MechanismNetwork): Readonly<Record<string, string>>;
}

/** Gas its direct call runs beyond what the network's caps measure. */
export interface GasCapability {
  /**
   * The gas its direct call for `order` runs beyond the network's transfer caps (GasCaps, measured on a plain
   * token transfer): Permit2's call that sends the payer's approval permit runs the token's permit first.
   */
  extra(order: { withPermit: boolean }): bigint;
}

/** What it says on the x402 surface of its own. */
export interface X402Capability {
  /**
   * Its own x402 reason codes, where the reference answers its payments in codes of their own (absent: the
   * specification's generic ones are its codes): the x402 surface asks them before its generic table.
   */
  readonly reasons?: MechanismX402Reasons;
  /** the x402 extensions it reads from a payment's `extensions` (Permit2: the payer's approval permit) */
  readonly extensions?: readonly X402Extension[];
}
