// What the layers above expect of one network opened by its family, run against a real local chain of each
// family (anvil with the real USDC; the local Solana chain with devnet USDC) in the int tier.
import { familyOfNetworkId } from '@facilitator/core';
import type { ChainFamily } from '../chain-family';
import type { FamilyNetwork } from '../family-network';

export interface FamilyNetworkUnderTest {
  family: ChainFamily<never, FamilyNetwork>;
  network: FamilyNetwork;
  /** an owner whose token balance is known */
  holder: { address: string; tokenBalance: bigint };
  /** a merchant whose fee allowance to `treasury` is known (and is not 0) */
  merchant: { address: string; treasury: string; feeAllowance: bigint };
  /** an account holding some of the native coin */
  gasPayer: string;
  /** an address nothing was ever sent to */
  nobody: string;
  /** a transaction that landed and succeeded */
  landed: string;
  /** a transaction that landed and failed */
  failed: string;
  /** a well-formed transaction id the chain never saw */
  neverSent: string;
  /** moves the chain's head forward (a block, a slot) */
  advance(): Promise<void>;
  /** stops the chain the test started */
  stop(): Promise<void>;
}

export function familyNetworkContract(name: string, open: () => Promise<FamilyNetworkUnderTest>): void {
  describe(`${name}: the family network contract`, () => {
    let subject: FamilyNetworkUnderTest;
    beforeAll(async () => {
      subject = await open();
    });
    afterAll(async () => {
      subject?.network.close();
      await subject?.stop();
    });

    it("is keyed by a CAIP-2 id of its family, and spells its token the family's way", () => {
      const { network, family } = subject;
      expect(familyOfNetworkId(network.networkId)).toBe(family.id);
      expect(network.family).toBe(family.id);
      expect(family.addresses.normalize(network.token)).toBe(network.token);
    });

    it("reads an owner's token balance, and 0 where an account holds none", async () => {
      const { reads } = subject.network;
      expect(await reads.tokenBalance(subject.holder.address)).toBe(subject.holder.tokenBalance);
      expect(await reads.tokenBalance(subject.nobody)).toBe(0n);
    });

    it("reads what the treasury may take of a merchant's tokens, and 0 for anyone the merchant did not allow", async () => {
      const { reads } = subject.network;
      const { address, treasury, feeAllowance } = subject.merchant;
      expect(feeAllowance).toBeGreaterThan(0n);
      expect(await reads.feeAllowance(address, treasury)).toBe(feeAllowance);
      expect(await reads.feeAllowance(address, subject.nobody)).toBe(0n);
      expect(await reads.feeAllowance(subject.nobody, treasury)).toBe(0n);
    });

    it('reads the native coin an account holds for fees, 0 where none', async () => {
      const { reads } = subject.network;
      expect(await reads.nativeBalance(subject.gasPayer)).toBeGreaterThan(0n);
      expect(await reads.nativeBalance(subject.nobody)).toBe(0n);
    });

    it('reads a head that moves forward and never back', async () => {
      const { reads } = subject.network;
      const before = await reads.head();
      await subject.advance();
      const after = await reads.head();
      expect(after).toBeGreaterThan(before);
      expect(await reads.head()).toBeGreaterThanOrEqual(after);
    });

    it('tells a landed transaction from a failed one and from one it never saw', async () => {
      const { reads } = subject.network;
      expect(await reads.transactionStatus(subject.landed)).toBe('landed');
      expect(await reads.transactionStatus(subject.failed)).toBe('failed');
      expect(await reads.transactionStatus(subject.neverSent)).toBe('unknown');
    });

    it('closes twice without complaint', () => {
      subject.network.close();
      expect(() => subject.network.close()).not.toThrow();
    });
  });
}
