import { isAddress } from '@solana/kit';
import type { AddressRules, ChainFamily, FamilyNetwork, FamilyNetworkReads, FamilyTransactionStatus } from '@facilitator/chain-family';
import { READ_COMMITMENT } from './commitments';
import { delegatedFeeAllowance } from './fee-allowance';
import { TOKEN_PROGRAM } from './programs';
import { RpcSvmReads, type SvmReads } from './svm-reads';

/** What the Solana family reads of a network's configuration to open it. */
export interface SvmNetworkSettings {
  /** `solana:<genesis hash prefix>` */
  caip2: string;
  rpcUrl: string;
  /** the token's mint (USDC), base58 */
  mint: string;
  /** the program that owns the mint (SPL Token unless it says otherwise) */
  tokenProgram?: string;
}

/** A Solana network as its family opens it: the seam's reads, and the family's own reads for the Solana-only layers. */
export interface SvmFamilyNetwork extends FamilyNetwork {
  readonly family: 'svm';
  readonly tokenProgram: string;
  readonly svm: SvmReads;
}

/** Solana addresses are 32 bytes in base58: case-sensitive, stored exactly as written. */
export const svmAddresses: AddressRules = {
  normalize: (raw) => (isAddress(raw) ? raw : undefined),
  same: (a, b) => a === b,
};

class SvmFamilyReads implements FamilyNetworkReads {
  constructor(
    private readonly svm: SvmReads,
    private readonly mint: string,
    private readonly tokenProgram: string,
  ) {}

  async tokenBalance(owner: string): Promise<bigint> {
    const account = await this.svm.tokenAccount(await this.svm.associatedTokenAccount(owner, this.mint, this.tokenProgram));
    // an account of another mint cannot sit at the owner's associated address for this one: read as none
    return account?.mint === this.mint ? account.amount : 0n;
  }

  async feeAllowance(merchant: string, treasury: string): Promise<bigint> {
    return (await delegatedFeeAllowance(this.svm, { merchant, mint: this.mint, treasury, tokenProgram: this.tokenProgram })).allowance;
  }

  nativeBalance(account: string): Promise<bigint> {
    return this.svm.solBalance(account);
  }

  head(): Promise<bigint> {
    return this.svm.blockHeight(READ_COMMITMENT.transaction);
  }

  async transactionStatus(id: string): Promise<FamilyTransactionStatus> {
    const status = await this.svm.signatureStatus(id, { searchTransactionHistory: true });
    // `processed` is one validator's view: not landed until the cluster confirmed it
    if (!status || status.confirmationStatus === null || status.confirmationStatus === 'processed') return 'unknown';
    return status.err === null ? 'landed' : 'failed';
  }
}

/** The Solana family: `solana` networks, Ed25519 keys, base58 addresses. */
export const svmChainFamily: ChainFamily<SvmNetworkSettings, SvmFamilyNetwork> = {
  id: 'svm',
  caipNamespace: 'solana',
  keyKind: 'ed25519',
  addresses: svmAddresses,
  open(settings) {
    const tokenProgram = settings.tokenProgram ?? TOKEN_PROGRAM;
    const svm = new RpcSvmReads(settings.rpcUrl);
    return {
      networkId: settings.caip2,
      family: 'svm',
      token: settings.mint,
      tokenProgram,
      svm,
      reads: new SvmFamilyReads(svm, settings.mint, tokenProgram),
      // kit's rpc holds no connection of its own between requests
      close() {},
    };
  },
};
