// x402's quick-start merchant, pointed at this facilitator: GET /weather costs $0.01 in USDC on Base Sepolia.
// Run with `npm run dev` up: node examples/merchant.mjs
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';

// defaults: the dev stack's facilitator and merchant (`npm run dev` prints both); set your own in production
const facilitatorUrl = process.env.FACILITATOR_URL ?? 'http://127.0.0.1:4020/x402';
const payTo = process.env.PAY_TO ?? '0x6CF15a51599aEf5e6d42dE0fC181Aa5a1B0E8961';
const port = Number(process.env.PORT ?? 4021);

const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register('eip155:84532', new ExactEvmScheme());

const app = express();
app.use(
  paymentMiddleware(
    {
      'GET /weather': {
        accepts: { scheme: 'exact', price: '$0.01', network: 'eip155:84532', payTo },
        description: 'the weather',
      },
    },
    resourceServer,
  ),
);
app.get('/weather', (_req, res) => {
  res.json({ weather: 'sunny', temperature: 21 });
});
app.listen(port, () => console.log(`merchant listening on http://127.0.0.1:${port}/weather`));
