import { approvalPermitProblem } from '@facilitator/payment-mechanisms';
import type { ChainReader } from './chain-reader';
import { FailureReason, VerificationFailure } from './failure-reasons';
import type { Payment } from './payment';

/** The spec's checks 2–6, which need nothing but the payment, the domain and the clock. */
export interface OfflineCheckContext {
  payment: Payment;
  /** the EIP-712 domain separator the payment's offline signature is made under (absent: its mechanism has none) */
  domainSeparator?: Uint8Array;
  treasury: string;
  nowSeconds: bigint;
  /** an authorization must stay valid at least this long after verify */
  marginSeconds: bigint;
  /** the smallest payment this merchant accepts to settle (0n: any) */
  minimumAmount: bigint;
  /** the token's EIP-712 domain separator, when the payment carries an approval permit signed under it */
  tokenDomainSeparator?: Uint8Array;
}

type Failure = VerificationFailure | undefined;

/**
 * Check 2, for a mechanism whose signature is recoverable offline (`PaymentMechanism.signature`: every EVM
 * one). Returns the digest the payer signed and the failure, if its signer is not the payer; contract wallets
 * are tried by the caller. A mechanism without that capability has no digest here and nothing to fail.
 */
export function checkSignature(ctx: OfflineCheckContext): { digest?: Uint8Array; failure: Failure } {
  const { terms, payload, signature, mechanism } = ctx.payment;
  if (!mechanism.signature) return { failure: undefined };
  if (!ctx.domainSeparator) throw new Error('a payment with an offline signature was checked without the domain separator it is signed under');
  const digest = mechanism.signature.signedDigest(payload, ctx.domainSeparator);
  const recovered = mechanism.signature.recoverSigner(digest, signature);
  if (recovered.ok && recovered.address === terms.payer) return { digest, failure: undefined };
  return {
    digest,
    failure: {
      reason: FailureReason.InvalidSignature,
      message: 'invalid signature',
      details: {
        reason: recovered.ok ? `signature was not made by ${mechanism.vocabulary.payer}` : recovered.reason,
        recovered: recovered.ok ? recovered.address : null,
        expected: terms.payer,
      },
    },
  };
}

/** Check 3. The details keep EIP-3009's key names (`authorization_to`) for every mechanism: answers have one shape. */
export function checkRecipient(ctx: OfflineCheckContext): Failure {
  const { terms, expected, mechanism } = ctx.payment;
  if (terms.payee === ctx.treasury) {
    return {
      reason: FailureReason.RecipientIsTreasury,
      message: 'payment must be to merchant address',
      details: {
        authorization_to: terms.payee,
        expected_payTo: expected.payTo,
        reason: 'the authorization pays the facilitator treasury; payments go directly to the merchant',
      },
    };
  }
  if (terms.payee !== expected.payTo) {
    return {
      reason: FailureReason.RecipientMismatch,
      message: 'payment must be to merchant address',
      details: {
        authorization_to: terms.payee,
        expected_payTo: expected.payTo,
        reason: `${mechanism.vocabulary.payee} does not equal the merchant address (payTo)`,
      },
    };
  }
  return undefined;
}

/** Check 4: exact equality; paying more is as wrong as paying less. */
export function checkAmount(ctx: OfflineCheckContext): Failure {
  const { terms, expected } = ctx.payment;
  if (terms.amount === expected.amount) return undefined;
  return {
    reason: FailureReason.AmountMismatch,
    message: 'amount mismatch',
    details: { authorization_value: terms.amount.toString(), expected_amount: expected.amount.toString() },
  };
}

/**
 * Check 4b, ours (the spec has no minimum): a payment worth less than the fee the merchant pays to settle
 * it is refused, so a stranger cannot drain a merchant's fee allowance with worthless payments. Placed
 * right after check 4 because it is also about the value.
 */
export function checkMinimum(ctx: OfflineCheckContext): Failure {
  return amountBelowMinimum(ctx.payment.terms.amount, ctx.minimumAmount);
}

/** The minimum rule on its own: verify applies it, and the settle intake again with the minimum in force then. */
export function amountBelowMinimum(value: bigint, minimum: bigint): Failure {
  if (value >= minimum) return undefined;
  return {
    reason: FailureReason.AmountBelowMinimum,
    message: 'amount below minimum',
    details: { authorization_value: value.toString(), minimum_amount: minimum.toString() },
  };
}

/**
 * Check 5: the requirements may name a token, and a payment that names the token it moves (Permit2's
 * `permitted.token`) signs one; each must be the one this network settles.
 */
export function checkToken(ctx: OfflineCheckContext): Failure {
  const { expected, network, terms } = ctx.payment;
  // the requirements' token first: when both are wrong, that is the one the merchant can fix
  const named = [expected.token, terms.token].find((token) => token !== undefined && token !== network.tokenAddress);
  if (named === undefined) return undefined;
  return {
    reason: FailureReason.TokenMismatch,
    message: 'token mismatch',
    details: {
      expected_token: named,
      supported_token: network.tokenAddress,
      reason: `only the token ${network.tokenAddress} is settled on ${network.caip2}`,
    },
  };
}

/**
 * Check 5b, for a mechanism whose payer names who may move its tokens (Permit2's spender): it must be the
 * contract settlement executes the payment through. A signature for any other spender is valid and useless
 * to us, and whoever controls that spender could take it.
 */
export function checkSpender(ctx: OfflineCheckContext): Failure {
  const { terms, mechanism } = ctx.payment;
  const required = mechanism.approval?.signedSpender;
  if (required === undefined || terms.spender === required) return undefined;
  return {
    reason: FailureReason.InvalidSpender,
    message: 'invalid spender',
    details: { spender: terms.spender ?? null, required_spender: required, reason: `${mechanism.vocabulary.spender ?? 'the spender'} must be ${required}, the contract that settles it` },
  };
}

/**
 * Check 5c, for a mechanism whose payer names who alone may execute it (upto's facilitator): it must be the
 * address this service executes from, the treasury. A payment for another facilitator verifies nothing we
 * could settle: its proxy would revert our call.
 */
export function checkSender(ctx: OfflineCheckContext): Failure {
  const { sender } = ctx.payment.terms;
  if (sender === undefined || sender === ctx.treasury) return undefined;
  return {
    reason: FailureReason.FacilitatorMismatch,
    message: 'facilitator mismatch',
    details: { facilitator: sender, expected_facilitator: ctx.treasury, reason: `the payment may be executed only by ${sender}; this facilitator executes from ${ctx.treasury} (/x402/supported: extra.facilitatorAddress)` },
  };
}

/**
 * Check 6, on the wall clock (block timestamps on Base follow it within seconds). USDC requires
 * validAfter < now < validBefore (every mechanism's terms are normalized to that rule); we also require
 * `marginSeconds` of validity left, since an authorization that expires during settlement cannot be settled.
 */
export function checkTime(ctx: OfflineCheckContext): Failure {
  const { validAfter, validBefore } = ctx.payment.terms;
  const now = ctx.nowSeconds;
  if (validAfter >= now) {
    return {
      reason: FailureReason.NotYetValid,
      message: 'authorization not yet valid',
      details: { validAfter: validAfter.toString(), currentTime: now.toString() },
    };
  }
  if (validBefore <= now) {
    return {
      reason: FailureReason.Expired,
      message: 'authorization expired',
      details: { validBefore: validBefore.toString(), currentTime: now.toString() },
    };
  }
  if (validBefore <= now + ctx.marginSeconds) {
    return {
      reason: FailureReason.ExpiresTooSoon,
      message: 'authorization expires too soon to be settled',
      details: {
        validBefore: validBefore.toString(),
        currentTime: now.toString(),
        minimum_validity_seconds: Number(ctx.marginSeconds),
      },
    };
  }
  return undefined;
}

/**
 * Check 2 as USDC decides it (FiatTokenV2_2's SignatureChecker.isValidSignatureNow; Permit2's
 * SignatureVerification decides the same way): an account WITHOUT code
 * signs by ECDSA; an account WITH code — a contract wallet, or an EOA delegated by EIP-7702 (code 0xef0100…,
 * whose EXTCODESIZE is 23) — is asked by ERC-1271 only, even when its key's ECDSA signature recovers to it.
 * An ECDSA signature accepted from an account with code would pass verify and fail on chain.
 * Costs one eth_getCode (batched) on the ECDSA path; the ERC-1271 call runs only for accounts with code.
 */
export async function checkPayerSignature(chain: ChainReader, ctx: OfflineCheckContext, signed = checkSignature(ctx)): Promise<Failure> {
  const { digest, failure } = signed;
  // no offline signature (its mechanism has none): nothing for the payer's code to accept or refuse here
  if (digest === undefined) return failure;
  if (failure) return checkContractSignature(chain, ctx.payment, digest, failure);
  const { payment } = ctx;
  const { terms, mechanism } = payment;
  const verdict = await chain.isValidContractSignature(payment.network.chainId, terms.payer, digest, payment.signature);
  if (verdict === undefined || verdict === true) return undefined; // no code: the key's signature is the checker's test
  const { payer, checker } = mechanism.vocabulary;
  return {
    reason: FailureReason.InvalidSignature,
    message: 'invalid signature',
    details: {
      reason: `${payer} has code, so ${checker} checks its signature by ERC-1271 only, and ${verdict === false ? 'the account rejected it' : verdict.refused}; the ECDSA signature of its key does not count`,
      recovered: terms.payer,
      expected: terms.payer,
    },
  };
}

/** Where a contract wallet's signature is accepted by the wallet itself (ERC-1271), as USDC would. */
export async function checkContractSignature(
  chain: ChainReader,
  payment: Payment,
  digest: Uint8Array,
  failure: VerificationFailure,
): Promise<Failure> {
  const accepted = await chain.isValidContractSignature(payment.network.chainId, payment.terms.payer, digest, payment.signature);
  if (accepted === true) return undefined;
  if (accepted === false) return { ...failure, details: { ...failure.details, reason: 'the payer contract (ERC-1271) rejected the signature' } };
  if (typeof accepted === 'object') return { ...failure, details: { ...failure.details, reason: accepted.refused } };
  return failure;
}


/**
 * Check 5d, for a payment that carries the payer's approval permit (Permit2's EIP-2612 permit for Permit2,
 * x402's eip2612GasSponsoring): it must be the payer's, for the payment's token and the contract its
 * mechanism moves through, usable past the margin, for the payment's signed amount, and signed by the payer
 * under the token's domain (`approvalPermitProblem`). Whether the token still takes its nonce is asked with
 * the payer's approval (check 7b).
 */
export function checkApprovalPermit(ctx: OfflineCheckContext): Failure {
  const { mechanism, payload, terms } = ctx.payment;
  const permit = mechanism.approval?.permit?.(payload);
  if (!mechanism.approval || !permit) return undefined;
  if (!ctx.tokenDomainSeparator) throw new Error('a payment with an approval permit was checked without the token\'s domain separator');
  const problem = approvalPermitProblem(mechanism.approval, permit, terms, ctx.tokenDomainSeparator, ctx.nowSeconds, ctx.marginSeconds);
  if (!problem) return undefined;
  return { reason: FailureReason.ApprovalPermitInvalid, message: 'invalid approval permit', details: { field: problem.field, reason: problem.reason } };
}
