// A merchant taking `exact` payments through Permit2 (`extra.assetTransferMethod: "permit2"`) and declaring
// x402's eip2612GasSponsoring: a buyer that never approved Permit2 signs an EIP-2612 permit with its payment,
// and the facilitator submits both, so the buyer still needs no gas. Run: node examples/merchant-permit2.mjs
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { declareEip2612GasSponsoringExtension } from '@x402/extensions';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';

const facilitatorUrl = process.env.FACILITATOR_URL ?? 'http://127.0.0.1:4020/x402';
const payTo = process.env.PAY_TO ?? '0x6CF15a51599aEf5e6d42dE0fC181Aa5a1B0E8961';
const port = Number(process.env.PORT ?? 4021);

const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register('eip155:84532', new ExactEvmScheme());

const app = express();
app.use(
  paymentMiddleware(
    {
      'GET /weather': {
        accepts: { scheme: 'exact', price: '$0.01', network: 'eip155:84532', payTo, extra: { assetTransferMethod: 'permit2' } },
        description: 'the weather, paid through Permit2',
        extensions: { ...declareEip2612GasSponsoringExtension() },
      },
    },
    resourceServer,
  ),
);
app.get('/weather', (_req, res) => {
  res.json({ weather: 'sunny', temperature: 21 });
});
app.listen(port, () => console.log(`merchant (Permit2) listening on http://127.0.0.1:${port}/weather`));
