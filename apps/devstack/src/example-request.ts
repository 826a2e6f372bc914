import type { Devnet } from '@facilitator/evm-devnet';
import { authorizationToJson } from '@facilitator/core';

/** A copy-paste verify request with a freshly signed payment from the devnet payer. */
export async function exampleVerifyCommand(devnet: Devnet, apiUrl: string): Promise<string> {
  const { authorization, signature } = await devnet.signTransferAuthorization(devnet.accounts.payer.privateKey, {
    to: devnet.accounts.merchant.address,
    value: 10_000n,
  });
  const body = {
    payment: {
      x402Version: 2,
      payload: {
        authorization: authorizationToJson(authorization),
        signature,
      },
    },
    requirements: { scheme: 'exact', price: '$0.01', network: 'eip155:84532', payTo: devnet.accounts.merchant.address, token: devnet.token },
  };
  const json = JSON.stringify(body);
  return [
    `curl -s -X POST ${apiUrl}/v1/verify -H 'Content-Type: application/json' -d '${json}'`,
    `curl -s -X POST ${apiUrl}/v1/settle -H 'Content-Type: application/json' -d '${json}'`,
  ].join('\n\n');
}
