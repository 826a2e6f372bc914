import { MaxUint256, getCreateAddress } from 'ethers';
import type { PlannedTransaction } from './signed-transactions';
import { fiatTokenFullInterface, linkedFiatTokenBytecode, signatureCheckerBytecode } from './usdc-artifacts';

/** Base Sepolia's USDC calls itself "USDC" (Base mainnet's says "USD Coin"); FiatTokenV2_2's version() is "2". */
export const DEVNET_TOKEN_NAME = 'USDC';
export const USDC_EIP712_VERSION = '2';
export const USDC_DECIMALS = 6;

export interface UsdcDeploymentPlan {
  token: string;
  signatureChecker: string;
  /** Set when the token is placed at a given address: the creation code whose runtime code goes there (anvil_setCode). */
  placedCreationCode?: string;
  /** To be sent by the deployer with consecutive nonces from the one the plan was made for. */
  transactions: PlannedTransaction[];
}

// Measured gas with headroom (library 427k, token 5.1M, initialize 184k, others under 85k); only gas used is paid.
const GAS = { library: 1_000_000n, token: 7_000_000n, initialize: 400_000n, call: 200_000n } as const;

/**
 * Deploys FiatTokenV2_2 the way Circle's scripts do, minus the proxy (not needed to exercise EIP-3009): the
 * deployer holds every admin role and becomes a minter with an unlimited allowance. Contract addresses are
 * computed from the deployer's nonces so the whole plan can be sent without waiting for receipts.
 */
export function planUsdcDeployment(deployer: string, firstNonce: number, tokenName = DEVNET_TOKEN_NAME, placedAt?: string): UsdcDeploymentPlan {
  const signatureChecker = getCreateAddress({ from: deployer, nonce: firstNonce });
  // placed: FiatTokenV2_2 has no constructor state, so its runtime code at the network's own USDC address,
  // initialized there, is the real token at its real address (and its domain separator names that address)
  const token = placedAt ?? getCreateAddress({ from: deployer, nonce: firstNonce + 1 });
  const deployToken = placedAt ? [] : [{ label: 'deploy FiatTokenV2_2', data: linkedFiatTokenBytecode(signatureChecker), gasLimit: GAS.token }];
  const fiatToken = fiatTokenFullInterface();
  const call = (label: string, data: string, gasLimit: bigint = GAS.call): PlannedTransaction => ({ label, to: token, data, gasLimit });
  const symbol = 'USDC';
  return {
    token,
    signatureChecker,
    placedCreationCode: placedAt ? linkedFiatTokenBytecode(signatureChecker) : undefined,
    transactions: [
      { label: 'deploy SignatureChecker', data: signatureCheckerBytecode(), gasLimit: GAS.library },
      ...deployToken,
      call(
        'initialize',
        fiatToken.encodeFunctionData('initialize', [tokenName, symbol, 'USD', USDC_DECIMALS, deployer, deployer, deployer, deployer]),
        GAS.initialize,
      ),
      call('initializeV2', fiatToken.encodeFunctionData('initializeV2', [tokenName])),
      call('initializeV2_1', fiatToken.encodeFunctionData('initializeV2_1', [deployer])),
      call('initializeV2_2', fiatToken.encodeFunctionData('initializeV2_2', [[], symbol])),
      call('configureMinter', fiatToken.encodeFunctionData('configureMinter', [deployer, MaxUint256])),
    ],
  };
}

export function planMint(token: string, to: string, amount: bigint): PlannedTransaction {
  const data = fiatTokenFullInterface().encodeFunctionData('mint', [to, amount]);
  return { label: `mint ${amount} to ${to}`, to: token, data, gasLimit: GAS.call };
}

export function planApprove(token: string, spender: string, amount: bigint): PlannedTransaction {
  const data = fiatTokenFullInterface().encodeFunctionData('approve', [spender, amount]);
  return { label: `approve ${amount} to ${spender}`, to: token, data, gasLimit: GAS.call };
}
