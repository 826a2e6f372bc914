// A network serves only the mechanisms whose contracts exist on its chain (issue 42, item 4): on a chain
// without x402's Permit2 proxies (their code removed from the devnet before the API asks, as on a chain they
// were never deployed to), /x402/supported lists no `upto` kind and no eip2612GasSponsoring extension, and
// verify refuses a Permit2 `exact` or `upto` payment with x402's reason, `permit2_proxy_not_deployed`. Once
// the proxies are there, what verify finds is what the list says.
import { Wallet } from 'ethers';
import { X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY } from '@facilitator/payment-mechanisms';
import { approvePermit2, permit2Request, uptoRequest } from './support/permit2-request';
import { startTestStack, type TestStack } from './support/test-stack';

const PRICE = 50_000n;
const PROXIES = [X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY];
let stack: TestStack;
let code: string[];

beforeAll(async () => {
  stack = await startTestStack();
  code = await Promise.all(PROXIES.map((proxy) => stack.devnet.provider.getCode(proxy)));
  for (const proxy of PROXIES) await stack.devnet.provider.send('anvil_setCode', [proxy, '0x']);
});
afterAll(async () => {
  await stack?.stop();
});

const supportedNow = async () =>
  ((await stack.http.get('/x402/supported')).body as { kinds: Array<{ x402Version: number; scheme: string; network: string }>; extensions: string[] });

it("a chain without x402's Permit2 proxies: /x402/supported advertises no Permit2 mechanism, and verify refuses its payments with x402's reason", async () => {
  const supported = await supportedNow();
  // `exact` stays, by EIP-3009 (USDC's own); `upto` has no mechanism here but through its proxy
  expect(supported.kinds.map(({ x402Version, scheme, network }) => `${x402Version} ${scheme} ${network}`)).toEqual(['2 exact eip155:84532', '1 exact base-sepolia']);
  expect(supported.extensions).toEqual(['payment-identifier', 'bazaar']);

  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, PRICE);
  await approvePermit2(stack.devnet, payer.privateKey);
  const merchant = stack.devnet.accounts.merchant.address;
  for (const body of [
    await permit2Request(stack.devnet, { payerKey: payer.privateKey, to: merchant, value: PRICE }),
    await uptoRequest(stack.devnet, { payerKey: payer.privateKey, to: merchant, value: PRICE }),
  ]) {
    const verified = await stack.http.post('/x402/verify').send(body);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ isValid: false, invalidReason: 'permit2_proxy_not_deployed' });
  }
  // and the EIP-3009 `exact` payment of the same network verifies
  expect((await stack.http.post('/v1/verify').send((await stack.payment()).formB())).body.status).toBe('verified');
});

it('once the proxies are there, verify finds them and the list follows what it found', async () => {
  for (const [i, proxy] of PROXIES.entries()) await stack.devnet.provider.send('anvil_setCode', [proxy, code[i]]);
  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, PRICE);
  await approvePermit2(stack.devnet, payer.privateKey);
  const merchant = stack.devnet.accounts.merchant.address;
  for (const body of [
    await permit2Request(stack.devnet, { payerKey: payer.privateKey, to: merchant, value: PRICE }),
    await uptoRequest(stack.devnet, { payerKey: payer.privateKey, to: merchant, value: PRICE }),
  ]) {
    expect((await stack.http.post('/x402/verify').send(body)).body).toMatchObject({ isValid: true });
  }
  const supported = await supportedNow();
  expect(supported.kinds.map(({ x402Version, scheme, network }) => `${x402Version} ${scheme} ${network}`)).toEqual(['2 exact eip155:84532', '2 upto eip155:84532', '1 exact base-sepolia']);
  expect(supported.extensions).toEqual(['payment-identifier', 'eip2612GasSponsoring', 'bazaar']);
});
