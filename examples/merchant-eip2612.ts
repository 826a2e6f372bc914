// `exact` through Permit2 for a buyer that never approved Permit2: the route declares x402's
// `eip2612GasSponsoring` extension, the buyer's client adds an EIP-2612 permit for Permit2 to its payment, and
// the facilitator submits that permit with the payment (its gas is ours, covered by the fee).
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { declareEip2612GasSponsoringExtension } from '@x402/extensions';

const facilitator = new HTTPFacilitatorClient({ url: process.env.FACILITATOR_URL ?? 'http://127.0.0.1:4020/x402' });
const server = new x402ResourceServer(facilitator).register('eip155:84532', new ExactEvmScheme());
const payTo = process.env.PAY_TO as `0x${string}`;

const app = express();
app.use(
  paymentMiddleware(
    {
      'GET /weather': {
        accepts: { scheme: 'exact', network: 'eip155:84532', payTo, price: '$0.01', extra: { assetTransferMethod: 'permit2' } },
        extensions: { ...declareEip2612GasSponsoringExtension() },
        description: 'the weather',
      },
    },
    server,
  ),
);
app.get('/weather', (_req, res) => {
  res.json({ weather: 'sunny', temperature: 21 });
});
app.listen(Number(process.env.PORT ?? 4021));
