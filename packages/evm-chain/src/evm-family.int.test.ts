// The EVM family's network on anvil with the real USDC (FiatTokenV2_2): the seam's reads answer as the family
// network contract says.
import { Contract, Wallet, hexlify, randomBytes } from 'ethers';
import { familyNetworkContract } from '@facilitator/chain-family/testing';
import { startDevnet } from '@facilitator/evm-devnet';
import { evmChainFamily } from './evm-family';

familyNetworkContract('evmChainFamily on anvil', async () => {
  const devnet = await startDevnet({ relayerCount: 1 });
  const { payer, merchant, treasury } = devnet.accounts;
  const approval = await devnet.approveTreasury(merchant.privateKey, 5_000_000n);
  // more than the merchant holds, with its gas given so nothing estimates it away: mined, and reverted
  const merchantWallet = new Wallet(merchant.privateKey, devnet.provider);
  const token = new Contract(devnet.token, ['function transfer(address to, uint256 amount) returns (bool)'], merchantWallet);
  const sent = await token.transfer(payer.address, 10n ** 18n, { gasLimit: 100_000n });
  const reverted = await devnet.provider.waitForTransaction(sent.hash);
  if (reverted?.status !== 0) throw new Error('the over-spending transfer was meant to revert');
  return {
    family: evmChainFamily,
    network: evmChainFamily.open({ chainId: devnet.chainId, caip2: `eip155:${devnet.chainId}`, rpcUrls: [devnet.rpcUrl], rpcTimeoutMs: 5_000, tokenAddress: devnet.token.toLowerCase() }),
    holder: { address: payer.address, tokenBalance: await devnet.balanceOf(payer.address) },
    merchant: { address: merchant.address, treasury: treasury.address, feeAllowance: 5_000_000n },
    gasPayer: treasury.address,
    nobody: Wallet.createRandom().address,
    landed: approval.hash,
    failed: sent.hash,
    neverSent: hexlify(randomBytes(32)),
    advance: async () => void (await devnet.provider.send('evm_mine', [])),
    stop: () => devnet.stop(),
  };
});
