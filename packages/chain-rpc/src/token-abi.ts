import { Interface } from 'ethers';

/**
 * The slice of Circle's FiatTokenV2_2 (USDC) that the facilitator uses, as a human-readable ABI.
 * Both `transferWithAuthorization` overloads are listed: the `bytes signature` one is cheaper
 * (about 79k gas against 96k) and also accepts ERC-1271 smart-wallet signatures. With overloads,
 * ethers needs the full signature to pick one, e.g. `token['transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)']`.
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
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
] as const;

export const TRANSFER_WITH_AUTHORIZATION_VRS =
  'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)';
export const TRANSFER_WITH_AUTHORIZATION_BYTES =
  'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)';

export const fiatTokenInterface = new Interface(FIAT_TOKEN_ABI);
