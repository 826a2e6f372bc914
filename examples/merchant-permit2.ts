// The same merchant asking for `exact` through Permit2 (`extra.assetTransferMethod: "permit2"`): the buyer
// signs a Permit2 witness transfer instead of an EIP-3009 authorization (it must have approved Permit2 once,
// or see merchant-eip2612.ts).
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';

const facilitator = new HTTPFacilitatorClient({ url: process.env.FACILITATOR_URL ?? 'http://127.0.0.1:4020/x402' });
const server = new x402ResourceServer(facilitator).register('eip155:84532', new ExactEvmScheme());
const payTo = process.env.PAY_TO as `0x${string}`;

const app = express();
app.use(
  paymentMiddleware(
    { 'GET /weather': { accepts: { scheme: 'exact', network: 'eip155:84532', payTo, price: '$0.01', extra: { assetTransferMethod: 'permit2' } }, description: 'the weather' } },
    server,
  ),
);
app.get('/weather', (_req, res) => {
  res.json({ weather: 'sunny', temperature: 21 });
});
app.listen(Number(process.env.PORT ?? 4021));
