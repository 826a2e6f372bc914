import { authorizationOf, signatureOf } from '../authorization';
import { failed, settlementDoomed } from '../failures';
import type { Step } from '../step';

/**
 * `pending`: before any fee, make sure the transfer can still succeed — unused on chain, not about to
 * expire, and a dry run from a relayer passes. A merchant must never pay for a doomed transfer.
 */
export const preflight: Step = async (ctx) => {
  const auth = authorizationOf(ctx.settlement);
  const now = BigInt(ctx.now());
  if (auth.validBefore <= now + BigInt(ctx.expiryMarginSeconds)) {
    return failed(
      settlementDoomed('authorization expired', { validBefore: auth.validBefore.toString(), currentTime: now.toString() }),
      true,
    );
  }
  const { usdc } = ctx.network;
  if (await usdc.isAuthorizationUsed(auth.from, auth.nonce)) {
    return failed(settlementDoomed('authorization is used or canceled on chain'), true);
  }
  const data = usdc.transferWithAuthorizationData(auth, signatureOf(ctx.settlement));
  const revert = await usdc.simulate(ctx.relayers[0], data);
  if (revert !== undefined) return failed(settlementDoomed(revert, { simulation: 'transferWithAuthorization' }), true);
  return { to: 'check_allowance' };
};
