import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { DEVNET_USDC_MINT, SOLANA_DEVNET_NETWORK } from '../dev-world';
import type { SolanaDevnet } from '../solana-devnet';

/** x402 v2 `exact` requirements on the local chain, as a resource server would state them. */
export interface StockSvmRequirements {
  scheme: 'exact';
  network: `${string}:${string}`;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { feePayer: string };
}

export interface StockSvmPaymentOptions {
  /** default: the dev world's merchant */
  payTo?: string;
  /** atomic USDC units; default 10,000 (one cent) */
  amount?: bigint | string;
  /** the requirements' `extra.feePayer`; default: the dev world's fee payer */
  feePayer?: string;
}

export interface StockSvmPayment {
  /** what was paid (x402's `accepted`) */
  requirements: StockSvmRequirements;
  /** the client's `payload`, as it goes into the x402 payment payload */
  payload: Record<string, unknown>;
  /** the payload's partially signed transaction, base64 wire bytes: signed by the payer, awaiting the fee payer */
  transaction: string;
}

/** The requirements a stock payment on `devnet` answers (USDC at its devnet mint, on the devnet network). */
export function stockSvmRequirements(devnet: SolanaDevnet, options: StockSvmPaymentOptions = {}): StockSvmRequirements {
  return {
    scheme: 'exact',
    network: SOLANA_DEVNET_NETWORK as `${string}:${string}`,
    asset: DEVNET_USDC_MINT,
    amount: String(options.amount ?? 10_000n),
    payTo: options.payTo ?? devnet.info.accounts.merchant.address,
    maxTimeoutSeconds: 60,
    extra: { feePayer: options.feePayer ?? devnet.info.accounts.feePayer.address },
  };
}

/**
 * The dev world's payer pays with the real `@x402/svm` client (x402 v2): the payment a stock client sends a
 * facilitator, built against the local chain (the client reads the mint and a recent blockhash over JSON-RPC).
 */
export async function stockSvmPayment(devnet: SolanaDevnet, options: StockSvmPaymentOptions = {}): Promise<StockSvmPayment> {
  const requirements = stockSvmRequirements(devnet, options);
  const client = new ExactSvmClient(devnet.world.signers.payer, { rpcUrl: devnet.chain.rpcUrl });
  const { payload } = await client.createPaymentPayload(2, requirements);
  return { requirements, payload, transaction: (payload as { transaction: string }).transaction };
}
