// Issue 22, low: "verify accepts ECDSA from a payer that has code while USDC asks ERC-1271 of any account with
// code". FiatTokenV2_2's SignatureChecker.isValidSignatureNow: `if (!isContract(signer)) ECRecover; else
// ERC-1271` with isContract = extcodesize > 0, so an EOA delegated by EIP-7702 (code 0xef0100 ++ delegate,
// 23 bytes) is asked by ERC-1271 too, running its delegate's code. checkPayerSignature follows that rule;
// each case is checked against USDC itself (a dry run of the transfer on anvil).
import { concat, Wallet } from 'ethers';
import { JsonRpcBatchClient, RpcChainReader, UsdcClient } from '@facilitator/evm-chain';
import { checkPayerSignature, type Payment } from '@facilitator/verification';
import { compileTestContract, deploy } from '../support/solidity';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { eip3009PaymentOf, exactEip3009, transferWithAuthorizationData } from '@facilitator/payment-mechanisms';

let stack: TestStack;
let rpc: JsonRpcBatchClient;
let reader: RpcChainReader;
let usdc: UsdcClient;

beforeAll(async () => {
  stack = await startTestStack();
  rpc = new JsonRpcBatchClient(stack.devnet.rpcUrl);
  reader = new RpcChainReader([{ chainId: stack.devnet.chainId, provider: stack.devnet.provider, rpc, tokenAddress: stack.devnet.token }]);
  usdc = new UsdcClient(stack.devnet.provider, stack.devnet.token);
}, 60_000);
afterAll(async () => {
  rpc?.destroy();
  await stack?.stop();
});

/** A payer key's own ECDSA signature of a payment to the merchant (valid by ECRecover), as verification sees it. */
async function signedBy(key: Wallet): Promise<{ payment: Payment; transferData: string }> {
  const signed = await stack.devnet.signTransferAuthorization(key.privateKey, { to: stack.devnet.accounts.merchant.address, value: PRICE_UNITS });
  const authorization = { ...signed.authorization, from: signed.authorization.from.toLowerCase(), to: signed.authorization.to.toLowerCase() };
  const network = stack.config.networks[0];
  const payment: Payment = {
    protocolVersion: 1,
    mechanism: exactEip3009,
    surface: 'v1',
    network,
    networkName: 'layer2-sepolia',
    ...eip3009PaymentOf(authorization, signed.signature.toLowerCase(), network),
    expected: { payTo: authorization.to, amount: PRICE_UNITS },
    request: {},
  };
  return { payment, transferData: transferWithAuthorizationData(authorization, signed.signature) };
}

async function verdicts(key: Wallet): Promise<{ ours: string; usdc: string }> {
  const { payment, transferData } = await signedBy(key);
  const failure = await checkPayerSignature(reader, {
    payment,
    domainSeparator: await reader.domainSeparator(stack.devnet.chainId),
    treasury: stack.devnet.accounts.treasury.address.toLowerCase(),
    nowSeconds: BigInt(Math.floor(Date.now() / 1000)),
    marginSeconds: 30n,
    minimumAmount: 0n,
  });
  const revert = await usdc.simulate(stack.devnet.accounts.relayers[0].address, transferData);
  return { ours: failure ? `refused (${failure.reason})` : 'accepted', usdc: revert === undefined ? 'accepted' : `refused (${revert})` };
}

/** A fresh key holding USDC, with `code` set on its account (none: an ordinary EOA). */
async function payerWithCode(code?: string): Promise<Wallet> {
  const key = Wallet.createRandom();
  await stack.devnet.mint(key.address, 10n * PRICE_UNITS);
  if (code) await stack.devnet.provider.send('anvil_setCode', [key.address, code]);
  return new Wallet(key.privateKey);
}

it("ECDSA from a payer that has code counts only where USDC's ERC-1271 check says so", async () => {
  const report = abuseReport(
    'ecdsa-from-payer-with-code',
    'ECDSA signature from a payer that has code',
    "the payer's key signs by ECDSA, but its account has code (a contract, or an EIP-7702 delegation), so USDC asks the account by ERC-1271 and ignores the ECDSA signature",
  );
  const { provider, accounts } = stack.devnet;
  const plain = await deploy(provider, accounts.deployer.privateKey, compileTestContract('HostileWallets.sol', 'PlainDelegate'));
  const selfSigned = await deploy(provider, accounts.deployer.privateKey, compileTestContract('HostileWallets.sol', 'EcdsaSelfDelegate'));
  const delegation = (to: string) => concat(['0xef0100', to]).toLowerCase();
  const cases: Array<{ what: string; code?: string; expected: string }> = [
    { what: 'an EOA without code (control)', expected: 'accepted' },
    { what: 'an account with contract code and no ERC-1271', code: await provider.getCode(await plain.getAddress()), expected: 'refused (invalid_signature)' },
    { what: 'an EOA delegated (EIP-7702) to code without ERC-1271', code: delegation(await plain.getAddress()), expected: 'refused (invalid_signature)' },
    { what: "an EOA delegated (EIP-7702) to code whose ERC-1271 accepts its key's ECDSA", code: delegation(await selfSigned.getAddress()), expected: 'accepted' },
  ];
  const rows: boolean[] = [];
  for (const c of cases) {
    const { ours, usdc: onChain } = await verdicts(await payerWithCode(c.code));
    rows.push(report.check(`${c.what}: verification`, c.expected, ours));
    rows.push(report.check(`${c.what}: verification agrees with USDC`, onChain.startsWith('accepted') ? 'accepted' : 'refused', ours.startsWith('accepted') ? 'accepted' : 'refused'));
    expect(ours).toBe(c.expected);
    expect(ours.startsWith('accepted')).toBe(onChain.startsWith('accepted'));
    if (!onChain.startsWith('accepted')) report.note(`${c.what}: USDC ${onChain}`);
  }
  report.note('wired into /v1/verify and /x402/verify once VerificationService calls checkPayerSignature in place of checkSignature + checkContractSignature');
  report.save();
  expect(rows.every(Boolean)).toBe(true);
});
