// Issue 41, item 4: a flood of payments built to fail. Strangers offer, through the standard x402 API, payments
// from unfunded throwaway payers (to an honest merchant) and payments to their own payTo without any fee
// allowance, with fresh nonces, beside honest x402 traffic. Each is refused at the settle request from three
// batched chain reads, with the reason the worker would give: no settlement is stored or enqueued for it, nothing
// is sent, and every honest payment settles.
import { Wallet } from 'ethers';
import { newMerchant } from '../support/chain-actions';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { x402V2Request } from '../support/x402-request';
import { abuseReport } from './abuse-report';

const FEE = 10_000n;
const STRANGERS = 120;
const HONEST = 12;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

it('strangers flooding x402 settle with payments that cannot settle: none stored or enqueued, nothing sent, every honest payment settled', async () => {
  const report = abuseReport(
    'flood-1-built-to-fail',
    'A flood of payments built to fail, beside honest x402 traffic',
    `${STRANGERS} x402 settles at once from strangers (half from unfunded throwaway payers to an honest merchant, half to their own payTo without a fee allowance, fresh nonces each) and ${HONEST} honest ones`,
  );
  const merchant = await newMerchant(stack.devnet, { balance: 100n * FEE, allowance: 100n * FEE });
  const asset = stack.devnet.token;
  const strangers = [];
  for (let i = 0; i < STRANGERS; i++) {
    const payer = Wallet.createRandom();
    const ownPayTo = i % 2 === 1 ? Wallet.createRandom().address : undefined;
    // the own-payTo half is funded (its payer has the money): only the missing allowance stands in its way
    if (ownPayTo) await stack.devnet.mint(payer.address, PRICE_UNITS);
    const to = ownPayTo ?? merchant.address;
    const p = await stack.payment({ payerKey: payer.privateKey, to });
    strangers.push({ payer: payer.address.toLowerCase(), body: x402V2Request(p.authorization, p.signature, { payTo: to, amount: PRICE_UNITS, asset }) });
  }
  const honest = [];
  for (let i = 0; i < HONEST; i++) {
    const p = await stack.payment({ to: merchant.address });
    honest.push(x402V2Request(p.authorization, p.signature, { payTo: merchant.address, amount: PRICE_UNITS, asset }));
  }
  const treasuryNonce = () => stack.devnet.provider.getTransactionCount(stack.devnet.accounts.treasury.address);
  const merchantBefore = await stack.devnet.balanceOf(merchant.address);

  const [strangerAnswers, honestAnswers] = await Promise.all([
    Promise.all(strangers.map((s) => stack.http.post('/x402/settle').send(s.body))),
    Promise.all(honest.map((b) => stack.http.post('/x402/settle').send(b))),
  ]);
  const reasons = new Map<string, number>();
  for (const a of strangerAnswers) reasons.set(`${a.status} ${a.body.success} ${a.body.errorReason}`, (reasons.get(`${a.status} ${a.body.success} ${a.body.errorReason}`) ?? 0) + 1);
  report.note(`strangers' answers: ${[...reasons].map(([k, v]) => `${v} × ${k}`).join('; ')}`);
  const strangerSettlements = await stack.db.prisma.settlement.count({ where: { payer: { in: strangers.map((s) => s.payer) } } });
  const honestSettled = honestAnswers.filter((a) => a.status === 200 && a.body.success === true).length;
  const ok = [
    report.check('honest x402 payments settled (success: true)', HONEST, honestSettled),
    report.check('settlements stored for the strangers', 0, strangerSettlements),
    report.check('strangers answered "insufficient_funds" (unfunded payer)', STRANGERS / 2, reasons.get('200 false insufficient_funds') ?? 0),
    report.check('strangers answered "insufficient_fee_allowance" (payTo without an allowance)', STRANGERS / 2, reasons.get('200 false insufficient_fee_allowance') ?? 0),
    // a settlement's job id is its settlement's id: no settlement, no job
    report.check('settlements stored (each with its one job)', HONEST, await stack.db.prisma.settlement.count({ where: { merchant: merchant.address.toLowerCase() } })),
    report.check("merchant's balance change", (BigInt(HONEST) * (PRICE_UNITS - FEE)).toString(), ((await stack.devnet.balanceOf(merchant.address)) - merchantBefore).toString()),
  ];
  report.note(`treasury nonce after the run: ${await treasuryNonce()} (only honest payments' transactions)`);
  report.save();
  expect(ok.every(Boolean)).toBe(true);
}, 300_000);
