import { Interface } from 'ethers';

/**
 * The slice of Circle's FiatTokenV2_2 (USDC) that the facilitator reads and calls besides a payment
 * mechanism's own calls, as a human-readable ABI: ERC-20, its EIP-712 domain, and the nonce state and events
 * its authorizations leave. A mechanism's calls on the token (EIP-3009's transfer) are the mechanism's own
 * (`@facilitator/payment-mechanisms`).
 */
export const FIAT_TOKEN_ABI = [
  'function name() view returns (string)',
  'function version() pure returns (string)',
  'function decimals() view returns (uint8)',
  'function balanceOf(address account) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
] as const;

export const fiatTokenInterface = new Interface(FIAT_TOKEN_ABI);
