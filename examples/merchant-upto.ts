// A metered merchant: the buyer signs `upto` a maximum ($0.10, a Permit2 witness transfer naming this
// facilitator's treasury), and the merchant settles what the request used. Settling less than the maximum
// needs the merchant's settle key (`npm run cli -- merchant settle-key`), sent with every facilitator call.
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { UptoEvmScheme } from '@x402/evm/upto/server';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/express';

const settleKey = { Authorization: `Bearer ${process.env.SETTLE_KEY}` };
const facilitator = new HTTPFacilitatorClient({
  url: process.env.FACILITATOR_URL ?? 'http://127.0.0.1:4020/x402',
  createAuthHeaders: async () => ({ verify: settleKey, settle: settleKey, supported: settleKey }),
});
const server = new x402ResourceServer(facilitator).register('eip155:84532', new UptoEvmScheme());
const payTo = process.env.PAY_TO as `0x${string}`;

const app = express();
app.use(paymentMiddleware({ 'GET /tokens': { accepts: { scheme: 'upto', network: 'eip155:84532', payTo, price: '$0.10' }, description: 'metered' } }, server));
app.get('/tokens', (_req, res) => {
  setSettlementOverrides(res, { amount: '60000' }); // this request used $0.06 of the $0.10 maximum
  res.json({ tokens: 1234 });
});
app.listen(Number(process.env.PORT ?? 4021));
