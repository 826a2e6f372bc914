// `upto` through Permit2 end to end: a merchant's Express app behind the real @x402/express middleware with
// @x402/evm's upto server scheme (it reads our /x402/supported for the facilitator address the payer must
// name), paid by the real @x402/fetch client with @x402/evm's upto client scheme (a Permit2 witness transfer
// of a maximum for x402's upto proxy), settled by our service against anvil with Circle's USDC, the real
// Permit2 and the proxy doubles. The merchant settles what was used with `setSettlementOverrides`: each
// request moves exactly that amount, once, and the fee only when the amount is at least the fee. Only the
// merchant names less than the maximum: it turned settle protection on, and its middleware sends its key.
import express from 'express';
import { getAddress, Wallet } from 'ethers';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { UptoEvmScheme as UptoEvmClientScheme } from '@x402/evm/upto/client';
import { UptoEvmScheme as UptoEvmServerScheme } from '@x402/evm/upto/server';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { MerchantAction } from '@facilitator/merchants';
import { PERMIT2_ADDRESS, X402_UPTO_PERMIT2_PROXY, UPTO_PERMIT2 } from '@facilitator/payment-mechanisms';
import { approvePermit2 } from './support/permit2-request';
import { balances, difference, transfersOnChain } from './support/chain-actions';
import { LocalServers } from './support/local-servers';
import { merchantCall } from './support/merchant-client';
import { startTestStack, type TestStack } from './support/test-stack';

const FEE = 10_000n;
/** the most a request may cost: what the payer signs */
const MAXIMUM = 100_000n;

let stack: TestStack;
const servers = new LocalServers();
let merchantUrl: string;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
  const facilitatorUrl = `${await servers.listen(stack.api.app)}/x402`;
  await approvePermit2(stack.devnet, stack.devnet.accounts.payer.privateKey);
  const settleKey = (await merchantCall(stack, new Wallet(stack.devnet.accounts.merchant.privateKey), MerchantAction.EnableSettleProtection)).body.settle_key as string;
  const withKey = async () => {
    const headers = { Authorization: `Bearer ${settleKey}` };
    return { verify: headers, settle: headers, supported: headers };
  };

  const token = getAddress(stack.devnet.token) as `0x${string}`;
  const payTo = getAddress(stack.devnet.accounts.merchant.address);
  const merchant = express();
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl, createAuthHeaders: withKey })).register('eip155:84532', new UptoEvmServerScheme());
  merchant.use(
    paymentMiddleware(
      {
        'GET /generate': {
          accepts: { scheme: 'upto', network: 'eip155:84532', payTo, price: { amount: MAXIMUM.toString(), asset: token, extra: { name: 'USDC', version: '2' } } },
          description: 'metered generation: pay for the tokens used, at most the maximum',
        },
      },
      resourceServer,
    ),
  );
  // the merchant bills what the request used, named by the test in the query
  merchant.get('/generate', (req, res) => {
    setSettlementOverrides(res, { amount: String(req.query.used) });
    res.json({ used: req.query.used });
  });
  merchantUrl = await servers.listen(merchant);
});

afterAll(async () => {
  await servers.close();
  await stack?.stop();
});

const payerFetch = () =>
  wrapFetchWithPayment(
    fetch,
    new x402Client()
      .register('eip155:*', new UptoEvmClientScheme(privateKeyToAccount(stack.devnet.accounts.payer.privateKey as `0x${string}`)))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: getAddress(stack.devnet.token), maxAmountPerPayment: MAXIMUM.toString() }] }),
  );

describe('upto through Permit2: @x402/express + @x402/fetch with our facilitator', () => {
  it('advertises the treasury as the facilitator an upto payer must name, for x402 v2 only', async () => {
    const supported = await stack.http.get('/x402/supported');
    const upto = supported.body.kinds.filter((k: { scheme: string }) => k.scheme === 'upto');
    expect(upto).toContainEqual({ x402Version: 2, scheme: 'upto', network: 'eip155:84532', extra: { facilitatorAddress: getAddress(stack.devnet.accounts.treasury.address) } });
    expect(upto.filter((k: { x402Version: number }) => k.x402Version === 1)).toEqual([]);
  });

  it.each([
    ['above the fee: the fee, then exactly the amount used', 42_000n, FEE],
    ['below the fee: the amount used, and no fee', 7_000n, 0n],
  ])('settles %s, once each', async (_case, used, fee) => {
    const { devnet } = stack;
    const fromBlock = await devnet.provider.getBlockNumber();
    const before = await balances(devnet);

    const res = await payerFetch()(`${merchantUrl}/generate?used=${used}`);
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { used: used.toString() } });
    // the payer paid what was used, not its maximum; the merchant got it less the fee, if any
    expect(difference(await balances(devnet), before)).toEqual({ payer: -used, merchant: used - fee, treasury: fee });
    expect(await transfersOnChain(devnet, fromBlock + 1, devnet.accounts.merchant.address, devnet.accounts.treasury.address)).toBe(fee > 0n ? 1 : 0);
    expect(await transfersOnChain(devnet, fromBlock + 1, devnet.accounts.payer.address, devnet.accounts.merchant.address)).toBe(1);

    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:84532', amount: used.toString(), transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const settlement = await stack.db.prisma.settlement.findFirstOrThrow({ where: { settlementTxHash: receipt.transaction } });
    expect(settlement).toMatchObject({ state: 'settled', mechanism: UPTO_PERMIT2, nonceSpace: PERMIT2_ADDRESS, amount: used.toString(), feeAmount: fee.toString() });
    // its verification holds the maximum the payer signed; the settlement, what moved
    const verification = await stack.db.prisma.verification.findUniqueOrThrow({ where: { id: settlement.verificationId } });
    expect(verification.amount).toBe(MAXIMUM.toString());
    // sent by the treasury, the facilitator the payer named, to x402's upto proxy
    const tx = await devnet.provider.getTransaction(receipt.transaction);
    expect({ from: tx!.from.toLowerCase(), to: tx!.to!.toLowerCase() }).toEqual({ from: devnet.accounts.treasury.address.toLowerCase(), to: X402_UPTO_PERMIT2_PROXY });
  });

  it('settles 0 as success with no transaction: nothing moves, nothing is charged or stored as a settlement', async () => {
    const { devnet } = stack;
    const settlements = await stack.db.prisma.settlement.count();
    const before = await balances(devnet);
    const res = await payerFetch()(`${merchantUrl}/generate?used=0`);
    expect(res.status).toBe(200);
    expect(decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({ success: true, transaction: '', amount: '0' });
    expect(difference(await balances(devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
    expect(await stack.db.prisma.settlement.count()).toBe(settlements);
  });
});
