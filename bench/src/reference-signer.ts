// The reference's signer: a viem wallet client with public actions on Base Sepolia's chain id, wired into
// @x402/evm's facilitator signer the way x402's own facilitator examples do. Shared by the in-process
// verify reference and the reference facilitator's process; it imports nothing of the facilitator.
import { toFacilitatorEvmSigner } from '@x402/evm';
import { createWalletClient, http, nonceManager, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { baseSepolia } from 'viem/chains';

export interface ReferenceSignerOptions {
  /** viem's receipt polling interval (its default on this chain is 1 s) */
  pollingInterval?: number;
  /** viem's nonce manager, for a signer that sends transactions concurrently */
  manageNonces?: boolean;
}

export function referenceSigner(privateKey: string, rpcUrl: string, options: ReferenceSignerOptions = {}) {
  const account = privateKeyToAccount(privateKey as `0x${string}`, options.manageNonces ? { nonceManager } : undefined);
  const client = createWalletClient({
    account,
    chain: baseSepolia,
    transport: http(rpcUrl),
    ...(options.pollingInterval === undefined ? {} : { pollingInterval: options.pollingInterval }),
  }).extend(publicActions);
  return toFacilitatorEvmSigner({
    address: account.address,
    getCode: (args) => client.getCode(args),
    readContract: (args) => client.readContract({ ...args, args: args.args ?? [] } as Parameters<typeof client.readContract>[0]),
    verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    writeContract: (args) => client.writeContract(args as Parameters<typeof client.writeContract>[0]),
    sendTransaction: (args) => client.sendTransaction(args),
    waitForTransactionReceipt: async (args) => {
      const receipt = await client.waitForTransactionReceipt(args);
      return { status: receipt.status, logs: receipt.logs };
    },
  });
}
