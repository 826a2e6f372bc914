// The Solana family's network on the local Solana chain (devnet USDC at its real address, real SPL programs):
// the seam's reads answer as the family network contract says.
import { getAddressDecoder, getBase58Decoder } from '@solana/kit';
import { getTransferCheckedInstruction } from '@solana-program/token';
import { familyNetworkContract } from '@facilitator/chain-family/testing';
import { DEVNET_USDC_MINT, SOLANA_DEVNET_NETWORK, USDC_DECIMALS, sendInstructions, signedTransaction, startSolanaDevnet } from '@facilitator/solana-devnet';
import { svmChainFamily } from './svm-family';

familyNetworkContract('svmChainFamily on the local Solana chain', async () => {
  // the clock is stopped: slots move only when the test says so
  const devnet = await startSolanaDevnet({ slotTimeMs: 0 });
  const { chain, world } = devnet;
  const { payer, merchant, treasury, feePayer } = world.signers;
  const transfer = (amount: bigint) =>
    getTransferCheckedInstruction({ source: world.tokenAccounts.payer, mint: world.mint, destination: world.tokenAccounts.merchant, authority: payer, amount, decimals: USDC_DECIMALS });
  const landed = await sendInstructions(chain, payer, [transfer(1n)]);
  // more than the payer holds, sent without preflight: it lands and fails
  const failed = await chain.send(Buffer.from(await signedTransaction(chain, payer, [transfer(10n ** 15n)]), 'base64'), { skipPreflight: true });
  // past the confirmation depth: both are what the cluster confirmed
  chain.advanceSlots(chain.finalizedAfterSlots + 1);
  return {
    family: svmChainFamily,
    network: svmChainFamily.open({ caip2: SOLANA_DEVNET_NETWORK, rpcUrl: chain.rpcUrl, mint: DEVNET_USDC_MINT }),
    holder: { address: payer.address, tokenBalance: 1_000_000_000n - 1n },
    merchant: { address: merchant.address, treasury: treasury.address, feeAllowance: world.feeAllowance },
    gasPayer: feePayer.address,
    nobody: getAddressDecoder().decode(new Uint8Array(32).fill(7)),
    landed,
    failed,
    neverSent: getBase58Decoder().decode(new Uint8Array(64).fill(9)),
    advance: async () => chain.advanceSlots(2),
    stop: () => devnet.stop(),
  };
});
