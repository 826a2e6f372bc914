import { MechanismAvailability } from './availability';
import type { PaymentReads } from './chain-port';
import { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY } from './permit2/addresses';
import { EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2 } from './mechanism-ids';

const NAMES_PERMIT2 = '0x' + PERMIT2_ADDRESS.slice(2).padStart(64, '0');

/** A chain where the contracts at `deployed` answer PERMIT2() with the canonical Permit2; every other address has no code. */
function chainWith(deployed: Set<string>) {
  const asked: string[] = [];
  const reads: PaymentReads = {
    readContract: async (to) => (asked.push(to), deployed.has(to) ? NAMES_PERMIT2 : '0x'),
    isAuthorizationUsed: async () => false,
  };
  return { asked, reads };
}

describe('MechanismAvailability', () => {
  it("serves the registry's mechanisms whose contracts exist: without x402's upto proxy, no upto", async () => {
    const chain = chainWith(new Set([X402_EXACT_PERMIT2_PROXY]));
    const availability = new MechanismAvailability(() => chain.reads);
    expect(await availability.servedOn(84532)).toEqual([EXACT_EIP3009, EXACT_PERMIT2]);
    expect(await availability.servedOn(1)).toEqual([]); // not a registry network
  });

  it('keeps a contract it found, asks again for a missing one (for the list, once the recheck time has passed), and leaves out what it could not read', async () => {
    const deployed = new Set<string>();
    const chain = chainWith(deployed);
    let now = 0;
    let down = false;
    const availability = new MechanismAvailability(
      () => ({ ...chain.reads, readContract: async (to, data) => (down ? Promise.reject(new Error('connect ECONNREFUSED')) : chain.reads.readContract(to, data)) }),
      { recheckMissingMs: 1_000, now: () => now },
    );
    expect(await availability.servedOn(84532)).toEqual([EXACT_EIP3009]);
    deployed.add(X402_EXACT_PERMIT2_PROXY);
    expect(await availability.servedOn(84532)).toEqual([EXACT_EIP3009]); // missing, not asked again yet
    now = 1_000;
    expect(await availability.servedOn(84532)).toEqual([EXACT_EIP3009, EXACT_PERMIT2]);
    down = true;
    now = 2_000;
    // found stays found; the upto proxy, due to be asked again, cannot be read: left out, and not taken as missing
    expect(await availability.servedOn(84532)).toEqual([EXACT_EIP3009, EXACT_PERMIT2]);
    down = false;
    deployed.add(X402_UPTO_PERMIT2_PROXY);
    expect(await availability.servedOn(84532)).toEqual([EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2]);
  });
});
