import { HDNodeWallet, Mnemonic, Wallet, id } from 'ethers';

/** The mnemonic anvil (and hardhat) use by default; its first accounts are prefunded with ETH. */
export const ANVIL_DEFAULT_MNEMONIC = 'test test test test test test test test test test test junk';

export interface DevnetAccount {
  address: string;
  privateKey: string;
}

export interface DevnetAccounts {
  /** Deploys USDC and holds every admin role of it (owner, master minter, minter, pauser, blacklister). */
  deployer: DevnetAccount;
  /** Facilitator treasury: receives fees, pulls them from merchants through their allowance. */
  treasury: DevnetAccount;
  /** Facilitator hot wallets that submit settlement transactions. */
  relayers: DevnetAccount[];
  /** Signs EIP-3009 authorizations; holds USDC but no ETH, like a real x402 client. */
  payer: DevnetAccount;
  /** Receives payments and approves the treasury; holds a little ETH to send that approval. */
  merchant: DevnetAccount;
}

/** Mnemonic indexes of the roles that need anvil's prefunded ETH. */
const DEPLOYER_INDEX = 0;
const TREASURY_INDEX = 1;
const FIRST_RELAYER_INDEX = 2;

export function mnemonicAccountCount(relayerCount: number): number {
  return FIRST_RELAYER_INDEX + relayerCount;
}

export function mnemonicAccount(mnemonic: string, index: number): DevnetAccount {
  const wallet = mnemonicRoot(mnemonic).derivePath(`m/44'/60'/0'/0/${index}`);
  return { address: wallet.address, privateKey: wallet.privateKey };
}

// Turning a mnemonic into a seed is deliberately slow (PBKDF2), so do it once per mnemonic.
const roots = new Map<string, HDNodeWallet>();
function mnemonicRoot(mnemonic: string): HDNodeWallet {
  let root = roots.get(mnemonic);
  if (!root) {
    root = HDNodeWallet.fromSeed(Mnemonic.fromPhrase(mnemonic).computeSeed());
    roots.set(mnemonic, root);
  }
  return root;
}

/**
 * Payer and merchant keys come from a fixed label rather than the mnemonic so that they start with no
 * ETH (a payer never pays gas in x402) and stay the same from run to run.
 */
function labelledAccount(label: string): DevnetAccount {
  const wallet = new Wallet(id(`x402-facilitator devnet ${label}`));
  return { address: wallet.address, privateKey: wallet.privateKey };
}

export function devnetAccounts(mnemonic: string, relayerCount: number): DevnetAccounts {
  if (!Number.isInteger(relayerCount) || relayerCount < 1) {
    throw new Error(`relayerCount must be a positive integer, got ${relayerCount}`);
  }
  return {
    deployer: mnemonicAccount(mnemonic, DEPLOYER_INDEX),
    treasury: mnemonicAccount(mnemonic, TREASURY_INDEX),
    relayers: Array.from({ length: relayerCount }, (_, i) => mnemonicAccount(mnemonic, FIRST_RELAYER_INDEX + i)),
    payer: labelledAccount('payer'),
    merchant: labelledAccount('merchant'),
  };
}
