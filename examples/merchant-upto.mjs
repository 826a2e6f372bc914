// A merchant billing by use with x402's `upto` scheme: the buyer signs for at most $0.10, the merchant settles
// what the request used (the payment goes through Permit2, as every upto payment does). Settling less than the maximum needs the merchant's settle key (turn settle
// protection on with `npm run cli -- merchant settle-key`; it prints the key once). Run:
//   SETTLE_KEY=<key> node examples/merchant-upto.mjs
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { UptoEvmScheme } from '@x402/evm/upto/server';
import { declareEip2612GasSponsoringExtension } from '@x402/extensions';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/express';

const facilitatorUrl = process.env.FACILITATOR_URL ?? 'http://127.0.0.1:4020/x402';
const payTo = process.env.PAY_TO ?? '0x6CF15a51599aEf5e6d42dE0fC181Aa5a1B0E8961';
const port = Number(process.env.PORT ?? 4021);
const settleKey = process.env.SETTLE_KEY;
if (!settleKey) throw new Error('set SETTLE_KEY to the merchant settle key (npm run cli -- merchant settle-key)');

// the settle key goes to the facilitator with every call, as Authorization: Bearer <key>
const facilitator = new HTTPFacilitatorClient({
  url: facilitatorUrl,
  createAuthHeaders: async () => {
    const headers = { Authorization: `Bearer ${settleKey}` };
    return { verify: headers, settle: headers, supported: headers };
  },
});
const resourceServer = new x402ResourceServer(facilitator).register('eip155:84532', new UptoEvmScheme());

const app = express();
app.use(
  paymentMiddleware(
    {
      'GET /generate': {
        accepts: { scheme: 'upto', price: '$0.10', network: 'eip155:84532', payTo },
        description: 'metered generation: pay for what is used, at most $0.10',
        // a buyer that never approved Permit2 signs an EIP-2612 permit with its payment: it needs no gas
        extensions: { ...declareEip2612GasSponsoringExtension() },
      },
    },
    resourceServer,
  ),
);
app.get('/generate', (_req, res) => {
  // what this request used: $0.042, in USDC's atomic units (6 decimals)
  setSettlementOverrides(res, { amount: '42000' });
  res.json({ text: 'generated', billed: '$0.042' });
});
app.listen(port, () => console.log(`merchant (upto) listening on http://127.0.0.1:${port}/generate`));
