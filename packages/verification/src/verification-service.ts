import { IdPrefix, newId, ServiceUnavailableError } from '@facilitator/core';
import type { SettlementRepository, VerificationRepository, VerificationRow } from '@facilitator/db';
import type { ChainReader } from './chain-reader';
import { checkAmount, checkContractSignature, checkRecipient, checkSignature, checkTime, checkToken, OfflineCheckContext } from './checks';
import { FailureReason, VerificationFailure } from './failure-reasons';
import type { Payment } from './payment';

export interface VerificationOutcome {
  record: VerificationRow;
  failure?: VerificationFailure;
}

/** Told about each stored verification, e.g. to emit webhook events. Must not throw. */
export type VerificationListener = (outcome: VerificationOutcome, payment: Payment) => Promise<void>;

export interface VerificationServiceOptions {
  chain: ChainReader;
  verifications: VerificationRepository;
  settlements: SettlementRepository;
  treasuryAddress: string;
  expiryMarginSeconds: number;
  /** Unix seconds; injectable for tests. */
  now?: () => number;
  onVerified?: VerificationListener;
}

/** Runs the spec's checks 2–7 in order on a well-formed payment (check 1), and stores the result. */
export class VerificationService {
  private readonly now: () => number;

  constructor(private readonly options: VerificationServiceOptions) {
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
  }

  async verify(payment: Payment): Promise<VerificationOutcome> {
    const failure = await this.firstFailure(payment);
    const record = await this.options.verifications.create(this.recordOf(payment, failure));
    const outcome = { record, failure };
    await this.options.onVerified?.(outcome, payment);
    return outcome;
  }

  private async firstFailure(payment: Payment): Promise<VerificationFailure | undefined> {
    const chainId = payment.network.chainId;
    const ctx: OfflineCheckContext = {
      payment,
      domainSeparator: await this.ask(payment, () => this.options.chain.domainSeparator(chainId)),
      treasury: this.options.treasuryAddress,
      nowSeconds: BigInt(this.now()),
      marginSeconds: BigInt(this.options.expiryMarginSeconds),
    };
    const signature = checkSignature(ctx);
    if (signature.failure) {
      const contractFailure = await this.ask(payment, () =>
        checkContractSignature(this.options.chain, payment, signature.digest, signature.failure!),
      );
      if (contractFailure) return contractFailure;
    }
    return checkRecipient(ctx) ?? checkAmount(ctx) ?? checkToken(ctx) ?? checkTime(ctx) ?? (await this.checkNonce(payment));
  }

  /** Check 7: not used by a settlement of ours, nor on chain (used or cancelled by the payer). */
  private async checkNonce(payment: Payment): Promise<VerificationFailure | undefined> {
    const { network, authorization } = payment;
    const [ours, onChain] = await Promise.all([
      this.options.settlements.findNonceUse(network.chainId, network.tokenAddress, authorization.from, authorization.nonce),
      this.ask(payment, () => this.options.chain.isAuthorizationUsed(network.chainId, authorization.from, authorization.nonce)),
    ]);
    if (!ours && !onChain) return undefined;
    return {
      reason: FailureReason.NonceUsed,
      message: 'nonce already used',
      details: {
        nonce: authorization.nonce,
        reason: ours
          ? 'the authorization was already used by a settlement'
          : 'the authorization was already used or cancelled on chain',
        ...(ours ? { settlement_id: ours.id } : {}),
      },
    };
  }

  /** A chain that cannot be asked is our problem, not an invalid payment: 503. */
  private async ask<T>(payment: Payment, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw new ServiceUnavailableError(`the ${payment.network.caip2} RPC endpoint did not answer; try again`, {
        network: payment.network.caip2,
        cause: err instanceof Error ? err.message.slice(0, 200) : 'unknown',
      });
    }
  }

  private recordOf(payment: Payment, failure: VerificationFailure | undefined) {
    const { authorization, network, expected } = payment;
    return {
      id: newId(IdPrefix.Verification),
      status: failure ? ('rejected' as const) : ('verified' as const),
      protocolVersion: payment.protocolVersion,
      surface: payment.surface,
      chainId: network.chainId,
      network: payment.networkName,
      tokenAddress: network.tokenAddress,
      payer: authorization.from,
      merchant: expected.payTo,
      amount: authorization.value.toString(),
      expectedAmount: expected.amount.toString(),
      nonce: authorization.nonce,
      validAfter: authorization.validAfter.toString(),
      validBefore: authorization.validBefore.toString(),
      signature: payment.signature,
      request: payment.request as object,
      metadata: (payment.metadata as object | undefined) ?? undefined,
      webhookUrl: payment.webhookUrl,
      failureMessage: failure?.message,
      failureDetails: (failure?.details as object | undefined) ?? undefined,
    };
  }
}
