import { JsonRpcProvider } from 'ethers';
import { UsdcClient } from './usdc-client';

const TOKEN = '0x' + '1'.repeat(40);
const MERCHANT = '0x' + '2'.repeat(40);
const TREASURY = '0x' + '3'.repeat(40);

/** A node answering eth_call with a counter that moves on each call, counting what it is asked. */
function node() {
  const asked: unknown[][] = [];
  let release: () => void = () => undefined;
  let gate = new Promise<void>((r) => (release = r));
  return {
    asked,
    open: () => {
      release();
      gate = new Promise<void>((r) => (release = r));
    },
    caller: {
      call: async <T>(method: string, params: unknown[]): Promise<T> => {
        asked.push([method, ...params]);
        const n = asked.length;
        await gate;
        return ('0x' + n.toString(16).padStart(64, '0')) as T;
      },
    },
  };
}

describe('UsdcClient reads of the latest state', () => {
  const provider = new JsonRpcProvider('http://127.0.0.1:1', undefined, { staticNetwork: true });
  afterAll(() => provider.destroy());

  it('identical reads asked while one is on its way share it; different ones do not', async () => {
    const n = node();
    const usdc = new UsdcClient(provider, TOKEN, n.caller);
    const reads = [usdc.allowance(MERCHANT, TREASURY), usdc.allowance(MERCHANT, TREASURY), usdc.balanceOf(MERCHANT), usdc.allowance(MERCHANT, TREASURY)];
    n.open();
    const [a, b, balance, c] = await Promise.all(reads);
    expect(n.asked).toHaveLength(2);
    expect([a, b, c]).toEqual([1n, 1n, 1n]);
    expect(balance).toBe(2n);
  });

  it('a read asked after the shared one came back goes to the node again (nothing older than the read is given)', async () => {
    const n = node();
    const usdc = new UsdcClient(provider, TOKEN, n.caller);
    const first = usdc.balanceOf(MERCHANT);
    n.open();
    expect(await first).toBe(1n);
    const second = usdc.balanceOf(MERCHANT);
    n.open();
    expect(await second).toBe(2n);
    expect(n.asked).toHaveLength(2);
  });

  it('a failed read fails everyone who shared it, and the next one is asked afresh', async () => {
    let fail = true;
    let asked = 0;
    const usdc = new UsdcClient(provider, TOKEN, {
      call: async <T>() => {
        asked++;
        await new Promise((r) => setTimeout(r, 5));
        if (fail) throw new Error('node down');
        return ('0x' + '0'.repeat(63) + '7') as T;
      },
    });
    const shared = [usdc.balanceOf(MERCHANT), usdc.balanceOf(MERCHANT)];
    await expect(Promise.all(shared)).rejects.toThrow('node down');
    fail = false;
    expect(await usdc.balanceOf(MERCHANT)).toBe(7n);
    expect(asked).toBe(2);
  });
});
