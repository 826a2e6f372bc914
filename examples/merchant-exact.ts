// A merchant selling GET /weather for $0.01 in USDC on Base Sepolia, paid with `exact` (an EIP-3009
// transferWithAuthorization the buyer signs): stock @x402/express, with this facilitator instead of x402.org's.
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';

const facilitator = new HTTPFacilitatorClient({ url: process.env.FACILITATOR_URL ?? 'http://127.0.0.1:4020/x402' });
const server = new x402ResourceServer(facilitator).register('eip155:84532', new ExactEvmScheme());
const payTo = process.env.PAY_TO as `0x${string}`; // your address: payments go straight to it

const app = express();
app.use(paymentMiddleware({ 'GET /weather': { accepts: { scheme: 'exact', network: 'eip155:84532', payTo, price: '$0.01' }, description: 'the weather' } }, server));
app.get('/weather', (_req, res) => {
  res.json({ weather: 'sunny', temperature: 21 });
});
app.listen(Number(process.env.PORT ?? 4021));
