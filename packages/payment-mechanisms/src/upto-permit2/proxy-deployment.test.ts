import { PERMIT2_ADDRESS, X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import type { PaymentReads } from '../chain-port';
import { uptoPermit2 } from '.';

/** Reads that give `answer` to every call (the check makes one, of the proxy's PERMIT2()), and record it. */
const answering = (answer: string) => {
  const asked: string[] = [];
  const reads: PaymentReads = {
    readContract: async (to, data) => (asked.push(`${to}:${data}`), answer),
    isAuthorizationUsed: async () => {
      throw new Error('not an EIP-3009 read');
    },
  };
  return { asked, ...reads };
};

describe("the upto proxy's deployment check", () => {
  it("asks the upto proxy which Permit2 it names, and is content with the canonical one", async () => {
    const chain = answering('0x' + PERMIT2_ADDRESS.slice(2).padStart(64, '0'));
    expect(await uptoPermit2.availability!.unavailable(chain)).toBeUndefined();
    // PERMIT2()
    expect(chain.asked).toEqual([`${X402_UPTO_PERMIT2_PROXY}:0x6afdd850`]);
  });

  it('says so when the upto proxy is missing or names another Permit2', async () => {
    expect(await uptoPermit2.availability!.unavailable(answering('0x'))).toBe(`x402's upto Permit2 proxy is not deployed at ${X402_UPTO_PERMIT2_PROXY} on this chain`);
    expect(await uptoPermit2.availability!.unavailable(answering('0x' + '99'.repeat(32)))).toContain(`the contract at ${X402_UPTO_PERMIT2_PROXY} does not name Permit2`);
  });
});
