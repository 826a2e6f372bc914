import { rpcUnavailable } from '@facilitator/core';
import type { VerificationRepository, VerificationRow } from '@facilitator/db';
import type { ChainReader } from './chain-reader';
import { checkToken } from './checks';
import type { VerificationFailure } from './failure-reasons';
import type { Payment } from './payment';
import { timedFrom, verificationRecordOf } from './verification-record';
import type { VerificationService } from './verification-service';
import type { ClaimedDomain, X402Payment } from './x402';
import type { DomainFailure, X402VerificationFailure } from './x402-reasons';

interface X402VerificationOutcome {
  record: VerificationRow;
  failure?: X402VerificationFailure;
}

interface X402VerifierOptions {
  /** the engine: every check and record of /v1 */
  service: VerificationService;
  chain: ChainReader;
  verifications: VerificationRepository;
  /** told about each payment refused before the engine ran (e.g. for metrics); must not throw */
  onRejected?: (failure: VerificationFailure | DomainFailure) => void;
}

/**
 * Verification for the x402 endpoints: the engine's checks, preceded by two on what the requirements
 * claim about the token, which x402 bodies always carry and the payer's wallet signed with — the asset
 * must be the token this network settles, and the EIP-712 domain (`extra.name`, `extra.version`) must be
 * its pinned one. Either mistake would otherwise surface as a bare "invalid signature" (the engine
 * checks the signature first, under the pinned domain), or never, if the wallet ignored the claim.
 */
export class X402Verifier {
  private readonly domains = new Map<number, Promise<{ name: string; version: string }>>();

  constructor(private readonly options: X402VerifierOptions) {}

  async verify(x: X402Payment): Promise<X402VerificationOutcome> {
    const timed = timedFrom(performance.now());
    const failure = await this.checkRequirements(x);
    if (!failure) return this.options.service.verify(x.payment);
    const record = await this.options.verifications.create(timed(verificationRecordOf(x.payment, failure)));
    this.options.onRejected?.(failure);
    return { record, failure };
  }

  /** The checks on the requirements alone (settle repeats them without storing anything). */
  async checkRequirements(x: X402Payment): Promise<VerificationFailure | DomainFailure | undefined> {
    // the engine's own token check and message; it reads nothing but the payment
    const token = checkToken({ payment: x.payment, domainSeparator: new Uint8Array(32), treasury: '', nowSeconds: 0n, marginSeconds: 0n, minimumAmount: 0n });
    return token ?? (await this.checkDomain(x));
  }

  private async checkDomain(x: X402Payment): Promise<DomainFailure | undefined> {
    if (x.claimedDomains.length === 0 || !this.options.chain.tokenDomain) return undefined;
    const pinned = await this.pinnedDomain(x.payment);
    for (const claim of x.claimedDomains) {
      const failure = compare(claim, pinned, x.payment);
      if (failure) return failure;
    }
    return undefined;
  }

  private pinnedDomain(payment: Payment): Promise<{ name: string; version: string }> {
    const chainId = payment.network.chainId;
    let domain = this.domains.get(chainId);
    if (!domain) {
      domain = this.options.chain.tokenDomain!(chainId).then(({ name, version }) => ({ name, version }));
      // a failed read is not cached: the next request asks the chain again
      domain.catch(() => this.domains.delete(chainId));
      this.domains.set(chainId, domain);
    }
    return domain.catch((err: unknown) => {
      throw rpcUnavailable(payment.network.caip2, err);
    });
  }
}

function compare(claim: ClaimedDomain, pinned: { name: string; version: string }, payment: Payment): DomainFailure | undefined {
  const token = payment.network.tokenAddress;
  const network = payment.network.caip2;
  if (claim.name !== undefined && claim.name !== pinned.name) {
    return {
      reason: 'eip712_name_mismatch',
      message: 'EIP-712 domain name mismatch',
      details: {
        reason: `${claim.path}.name is ${JSON.stringify(claim.name)}, but the token ${token} on ${network} signs under the name ${JSON.stringify(pinned.name)}; a payment signed with the wrong name cannot be settled`,
        claimed_name: claim.name,
        expected_name: pinned.name,
      },
    };
  }
  if (claim.version !== undefined && claim.version !== pinned.version) {
    return {
      reason: 'eip712_version_mismatch',
      message: 'EIP-712 domain version mismatch',
      details: {
        reason: `${claim.path}.version is ${JSON.stringify(claim.version)}, but the token ${token} on ${network} signs under the version ${JSON.stringify(pinned.version)}; a payment signed with the wrong version cannot be settled`,
        claimed_version: claim.version,
        expected_version: pinned.version,
      },
    };
  }
  return undefined;
}

