import { executorTargets } from '@facilitator/payment-mechanisms';
import { setUpExecutor } from '@facilitator/evm-executor';
import type { Devnet } from './devnet';
import type { DevnetAccount } from './test-accounts';

/**
 * The atomic path's set-up on a devnet: an executor holding this fee and exactly these relayers (the
 * first pays for it), and the treasury delegating to it. Returns the executor's address; throws when the
 * delegation is not in place afterwards.
 */
export async function setUpDevnetExecutor(devnet: Devnet, fee: bigint, relayers: readonly DevnetAccount[] = devnet.accounts.relayers): Promise<string> {
  const { treasury } = devnet.accounts;
  const status = await setUpExecutor(
    devnet.provider,
    {
      chainId: devnet.chainId,
      token: devnet.token,
      targets: executorTargets({ chainId: devnet.chainId, tokenAddress: devnet.token.toLowerCase() }),
      treasury: treasury.address,
      fee,
      relayers: relayers.map((r) => r.address),
    },
    { treasuryKey: treasury.privateKey, senderKey: relayers[0].privateKey },
  );
  if (status.state !== 'ready') throw new Error(`the settlement executor could not be set up: ${status.why}`);
  return status.executor;
}
