// The merchant's side of the merchant endpoints, for tests: sign a request with the payTo key and call.
import type { BaseWallet } from 'ethers';
import { ANVIL_DEFAULT_MNEMONIC, devnetAccounts } from '@facilitator/evm-devnet';
import { MerchantAction, signMerchantRequest, type ProofRequest } from '@facilitator/merchants';
import type { TestStack } from './test-stack';

const NETWORK = { caip2: 'eip155:84532', chainId: 84532 };
/** every test devnet's treasury (anvil's default mnemonic): merchant requests are bound to it */
export const DEVNET_TREASURY = devnetAccounts(ANVIL_DEFAULT_MNEMONIC, 1).treasury.address;

export async function merchantProof(
  wallet: BaseWallet | undefined,
  merchant: string,
  action: MerchantAction,
  parameters: Record<string, unknown> = {},
  extra: Partial<ProofRequest> = {},
) {
  return signMerchantRequest(wallet, { action, merchant, parameters, network: NETWORK, treasury: DEVNET_TREASURY, ...extra });
}

const PATHS: Record<string, string> = {
  [MerchantAction.GetWebhookSecret]: 'webhook-secret',
  [MerchantAction.RotateWebhookSecret]: 'webhook-secret/rotate',
  [MerchantAction.EnableSettleProtection]: 'settle-key',
  [MerchantAction.DisableSettleProtection]: 'settle-key/revoke',
  [MerchantAction.SetMinimum]: 'minimum',
};

/** Signs and sends one merchant request; returns the supertest response. */
export async function merchantCall(stack: TestStack, wallet: BaseWallet, action: MerchantAction, parameters: Record<string, unknown> = {}) {
  const proof = await merchantProof(wallet, wallet.address, action, parameters);
  return stack.http.post(`/v1/merchants/${wallet.address}/${PATHS[action]}`).send({ ...parameters, proof });
}

/** The merchant's current webhook secret, fetched as a merchant would. */
export async function webhookSecretOf(stack: TestStack, wallet: BaseWallet): Promise<string> {
  const res = await merchantCall(stack, wallet, MerchantAction.GetWebhookSecret);
  if (res.status !== 200) throw new Error(`webhook-secret: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.secret as string;
}
