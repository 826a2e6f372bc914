import { Contract, parseEther, parseUnits, toQuantity, type JsonRpcProvider, type TransactionReceipt } from 'ethers';
import type { Eip712Domain } from '@facilitator/core';
import { createProvider } from '@facilitator/evm-chain';
import { FIAT_TOKEN_ABI } from '@facilitator/evm-chain';
import { EIP3009_TOKEN_ABI } from '@facilitator/payment-mechanisms';
import { startAnvil, type AnvilOptions, type AnvilProcess } from './anvil-process';
import { writeDevnetInfo, type DevnetInfo } from './devnet-info-file';
import { serialSender } from './serial-sender';
import { installPermit2 } from './permit2/install-permit2';
import { confirmAll, currentFees, submitInOrder } from './signed-transactions';
import { ANVIL_DEFAULT_MNEMONIC, devnetAccounts, mnemonicAccountCount, type DevnetAccounts } from './test-accounts';
import { signTransferAuthorization, type AuthorizationFields, type SignedAuthorization } from './transfer-authorization';
import { DEVNET_TOKEN_NAME, USDC_DECIMALS, USDC_EIP712_VERSION, planApprove, planMint, planUsdcDeployment } from './usdc-deployment';

export interface DevnetOptions extends Pick<AnvilOptions, 'port' | 'host' | 'chainId' | 'blockTime' | 'startupTimeoutMs'> {
  /** Relayer accounts to derive (mnemonic indexes 2, 3, ...); default 2. */
  relayerCount?: number;
  /** USDC minted to the payer, in atomic units; default 1000 USDC. */
  payerBalance?: bigint;
  /** USDC minted to the merchant; default 1000 USDC. */
  merchantBalance?: bigint;
  /** The merchant's allowance to the treasury; default 100 USDC. */
  treasuryAllowance?: bigint;
  /** ETH for the merchant's own transactions; default 1 ETH. */
  merchantEth?: bigint;
  /** ETH for the payer; default none, as x402 payers never pay gas. */
  payerEth?: bigint;
  /** EIP-712 domain name and token name; default "USDC" as on Base Sepolia ("USD Coin" on Base mainnet). */
  tokenName?: string;
  /** Where the token lives, e.g. the network's own USDC address from the registry; default where the deployer creates it. */
  tokenAddress?: string;
  /** Where to write the JSON description of the devnet (see DevnetInfo). */
  infoFile?: string;
  /** How long to wait for a transaction's receipt; default 30 s. */
  receiptTimeoutMs?: number;
}

export interface Devnet {
  readonly rpcUrl: string;
  readonly chainId: number;
  readonly port: number;
  readonly pid: number;
  /** The USDC (FiatTokenV2_2) address. */
  readonly token: string;
  readonly eip712Domain: Eip712Domain;
  readonly accounts: DevnetAccounts;
  readonly provider: JsonRpcProvider;
  /** Read-only USDC contract on `provider`; `.connect(wallet)` to send. */
  readonly usdc: Contract;
  readonly info: DevnetInfo;
  balanceOf(address: string): Promise<bigint>;
  allowance(owner: string, spender: string): Promise<bigint>;
  /** Mints as the deployer (an unlimited minter). */
  mint(to: string, amount: bigint): Promise<TransactionReceipt>;
  /** Sends `approve(treasury, amount)` from the merchant key, which needs ETH (the devnet merchant has some). */
  approveTreasury(merchantKey: string, amount: bigint): Promise<TransactionReceipt>;
  /** anvil_setBalance: gives an address exactly `wei`. */
  setEthBalance(address: string, wei: bigint): Promise<void>;
  /** An EIP-3009 authorization signed with ethers' signTypedData under this token's real domain. */
  signTransferAuthorization(payerKey: string, fields: AuthorizationFields): Promise<SignedAuthorization>;
  /** The last lines anvil printed (it logs each request and transaction), for debugging a failing test. */
  recentOutput(): string;
  /** Stops anvil and waits for it to exit; safe to call twice. */
  stop(): Promise<void>;
}

const usdc = (amount: string) => parseUnits(amount, USDC_DECIMALS);

/** Starts anvil, deploys Circle's FiatTokenV2_2 and funds the test accounts, in about 0.1 s. */
export async function startDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  const accounts = devnetAccounts(ANVIL_DEFAULT_MNEMONIC, options.relayerCount ?? 2);
  const anvil = await startAnvil({
    port: options.port,
    host: options.host,
    chainId: options.chainId,
    blockTime: options.blockTime,
    startupTimeoutMs: options.startupTimeoutMs,
    mnemonic: ANVIL_DEFAULT_MNEMONIC,
    accounts: Math.max(10, mnemonicAccountCount(accounts.relayers.length)),
  });
  // No batching delay: setup is a chain of dependent calls, and ethers would hold each one for 10 ms.
  const provider = createProvider(anvil.rpcUrl, anvil.chainId, { batchStallTime: 0, pollingInterval: 100 });
  try {
    const token = await deployAndFund(provider, anvil.chainId, accounts, options);
    const devnet = assemble(anvil, provider, accounts, token, options);
    if (options.infoFile) writeDevnetInfo(options.infoFile, devnet.info);
    return devnet;
  } catch (error) {
    provider.destroy();
    await anvil.stop();
    throw new Error(`devnet setup failed: ${(error as Error).message}\nanvil output:\n${anvil.recentOutput()}`, { cause: error });
  }
}

async function deployAndFund(provider: JsonRpcProvider, chainId: number, accounts: DevnetAccounts, options: DevnetOptions): Promise<string> {
  const timeoutMs = options.receiptTimeoutMs ?? 30_000;
  const { deployer, merchant, payer, treasury } = accounts;
  const plan = planUsdcDeployment(deployer.address, 0, options.tokenName, options.tokenAddress);
  if (plan.placedCreationCode) {
    const runtime = await provider.call({ from: deployer.address, data: plan.placedCreationCode });
    await provider.send('anvil_setCode', [plan.token, runtime]);
  }
  const mints = [
    { to: payer.address, amount: options.payerBalance ?? usdc('1000') },
    { to: merchant.address, amount: options.merchantBalance ?? usdc('1000') },
  ];
  const deployerTransactions = [
    ...plan.transactions,
    // FiatToken refuses to mint 0 ("mint amount not greater than 0"), so a zero balance is simply not minted.
    ...mints.filter(({ amount }) => amount > 0n).map(({ to, amount }) => planMint(plan.token, to, amount)),
  ];
  const [fees] = await Promise.all([
    currentFees(provider),
    // as on every chain the service settles on: x402's Permit2 payments sign for it at its canonical address
    installPermit2(provider, chainId),
    setEthBalance(provider, merchant.address, options.merchantEth ?? parseEther('1')),
    options.payerEth ? setEthBalance(provider, payer.address, options.payerEth) : undefined,
  ]);
  // A fresh anvil: the deployer's first nonce is 0, which the planned contract addresses rely on.
  const deployed = await submitInOrder(provider, deployer.privateKey, 0, deployerTransactions, fees);
  await confirmAll(provider, deployed, labels(deployerTransactions), timeoutMs);
  // Only after the token exists: with --block-time, a same-block approve could be ordered before the
  // deployment, and a call to an address without code "succeeds" without doing anything.
  const approve = planApprove(plan.token, treasury.address, options.treasuryAllowance ?? usdc('100'));
  const approved = await submitInOrder(provider, merchant.privateKey, 0, [approve], fees);
  await confirmAll(provider, approved, [approve.label], timeoutMs);
  return plan.token;
}

function labels(transactions: Array<{ label: string }>): string[] {
  return transactions.map((tx) => tx.label);
}

async function setEthBalance(provider: JsonRpcProvider, address: string, wei: bigint): Promise<void> {
  await provider.send('anvil_setBalance', [address, toQuantity(wei)]);
}

function assemble(
  anvil: AnvilProcess,
  provider: JsonRpcProvider,
  accounts: DevnetAccounts,
  token: string,
  options: DevnetOptions,
): Devnet {
  const eip712Domain: Eip712Domain = {
    name: options.tokenName ?? DEVNET_TOKEN_NAME,
    version: USDC_EIP712_VERSION,
    chainId: anvil.chainId,
    verifyingContract: token,
  };
  // the token's reads and EIP-3009's calls, which the devnet's tests send by hand
  const contract = new Contract(token, [...FIAT_TOKEN_ABI, ...EIP3009_TOKEN_ABI], provider);
  const send = serialSender(provider, options.receiptTimeoutMs ?? 30_000);
  const info: DevnetInfo = {
    rpcUrl: anvil.rpcUrl,
    chainId: anvil.chainId,
    pid: anvil.pid,
    token: { address: token, symbol: 'USDC', decimals: USDC_DECIMALS, eip712: { name: eip712Domain.name, version: eip712Domain.version } },
    accounts,
  };
  return {
    rpcUrl: anvil.rpcUrl,
    chainId: anvil.chainId,
    port: anvil.port,
    pid: anvil.pid,
    token,
    eip712Domain,
    accounts,
    provider,
    usdc: contract,
    info,
    balanceOf: async (address) => (await contract.balanceOf(address)) as bigint,
    allowance: async (owner, spender) => (await contract.allowance(owner, spender)) as bigint,
    mint: (to, amount) => send(accounts.deployer.privateKey, planMint(token, to, amount)),
    approveTreasury: (merchantKey, amount) => send(merchantKey, planApprove(token, accounts.treasury.address, amount)),
    setEthBalance: (address, wei) => setEthBalance(provider, address, wei),
    signTransferAuthorization: (payerKey, fields) => signTransferAuthorization(payerKey, eip712Domain, fields),
    recentOutput: () => anvil.recentOutput(),
    stop: async () => {
      provider.destroy();
      await anvil.stop();
    },
  };
}
