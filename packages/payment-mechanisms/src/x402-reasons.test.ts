import { FailureReason } from './failure-reason';
import { registeredMechanisms } from './registry';

describe("each mechanism's own x402 reason codes", () => {
  const X402_CODE = /^[a-z0-9_]+$/;

  it.each(registeredMechanisms().map((m) => [m.id, m] as const))('%s: its codes are x402 codes, keyed by failure reasons', (_id, mechanism) => {
    const own = mechanism.x402?.reasons;
    if (!own) return;
    const reasons = new Set<string>(Object.values(FailureReason));
    for (const [reason, code] of Object.entries(own.invalid ?? {})) {
      expect(reasons.has(reason)).toBe(true);
      expect(code).toMatch(X402_CODE);
    }
    for (const code of [...Object.values(own.approvalPermit?.byField ?? {}), own.approvalPermit?.otherwise, own.settleAboveSigned].filter((c) => c !== undefined)) {
      expect(code).toMatch(X402_CODE);
    }
    for (const [, code] of own.settleFailures ?? []) expect(code).toMatch(X402_CODE);
  });

  it('a mechanism whose payer signs a maximum names its code for a settle amount above it', () => {
    for (const mechanism of registeredMechanisms().filter((m) => m.signedAmount === 'maximum')) {
      expect(mechanism.x402?.reasons?.settleAboveSigned).toMatch(X402_CODE);
    }
  });

  it('a mechanism whose payments carry an approval permit names its codes for it', () => {
    for (const mechanism of registeredMechanisms().filter((m) => m.approval?.permit !== undefined)) {
      expect(mechanism.x402?.reasons?.approvalPermit?.otherwise).toMatch(X402_CODE);
    }
  });
});
