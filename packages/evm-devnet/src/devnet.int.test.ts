import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract, Interface, Signature, TypedDataEncoder, Wallet, concat, hexlify, parseUnits, randomBytes } from 'ethers';
import { bytesToHex, domainSeparator } from '@facilitator/core';
import { recoverAuthorizationSigner, transferAuthorizationDigest } from '@facilitator/payment-mechanisms';
import { FIAT_TOKEN_ABI } from '@facilitator/evm-chain';
import { EIP3009_TOKEN_ABI, TRANSFER_WITH_AUTHORIZATION_BYTES, TRANSFER_WITH_AUTHORIZATION_VRS } from '@facilitator/payment-mechanisms';
import { startDevnet, type Devnet } from './devnet';
import { readDevnetInfo } from './devnet-info-file';
import { fiatTokenAbi } from './usdc-artifacts';
import type { SignedAuthorization } from './transfer-authorization';

const usdc = (amount: string) => parseUnits(amount, 6);

let devnet: Devnet;
let workDir: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'devnet-test-'));
  devnet = await startDevnet({ infoFile: join(workDir, 'devnet.json') });
});

afterAll(async () => {
  await devnet?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

function relayer(index = 0): Wallet {
  return new Wallet(devnet.accounts.relayers[index].privateKey, devnet.provider);
}

function tokenAs(wallet: Wallet): Contract {
  return devnet.usdc.connect(wallet) as Contract;
}

function vrsArguments({ authorization: a, signature }: SignedAuthorization) {
  const { v, r, s } = Signature.from(signature);
  return [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, v, r, s];
}

function bytesArguments({ authorization: a, signature }: SignedAuthorization, signatureBytes = signature) {
  return [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signatureBytes];
}

// how fast it starts is not asserted here (a timed test fails on a loaded machine, as it did in a CI
// rehearsal at 2.5 s): a devnet that does not start fails beforeAll through startDevnet's own timeout
describe('startDevnet', () => {
  it('deploys Circle FiatTokenV2_2 as Base Sepolia USDC', async () => {
    expect(await devnet.usdc.name()).toBe('USDC');
    expect(await devnet.usdc.version()).toBe('2');
    expect(await devnet.usdc.decimals()).toBe(6n);
    expect(await devnet.provider.getCode(devnet.token)).not.toBe('0x');
  });

  it("exposes the token's real EIP-712 domain", async () => {
    const onChain = await devnet.usdc.DOMAIN_SEPARATOR();
    expect(onChain).toBe(TypedDataEncoder.hashDomain(devnet.eip712Domain));
    expect(bytesToHex(domainSeparator(devnet.eip712Domain))).toBe(onChain);
  });

  it('funds the payer and merchant and approves the treasury', async () => {
    const { payer, merchant, treasury } = devnet.accounts;
    expect(await devnet.balanceOf(payer.address)).toBe(usdc('1000'));
    expect(await devnet.balanceOf(merchant.address)).toBe(usdc('1000'));
    expect(await devnet.allowance(merchant.address, treasury.address)).toBe(usdc('100'));
  });

  it('gives ETH to the accounts that send transactions, and none to the payer', async () => {
    const { payer, merchant, treasury, relayers } = devnet.accounts;
    expect(relayers).toHaveLength(2);
    for (const account of [merchant, treasury, ...relayers]) {
      expect(await devnet.provider.getBalance(account.address)).toBeGreaterThan(0n);
    }
    expect(await devnet.provider.getBalance(payer.address)).toBe(0n);
  });

  it('writes the devnet description file', () => {
    const info = readDevnetInfo(join(workDir, 'devnet.json'));
    expect(info).toEqual(JSON.parse(JSON.stringify(devnet.info)));
    expect(info).toMatchObject({
      rpcUrl: devnet.rpcUrl,
      chainId: 84532,
      token: { address: devnet.token, decimals: 6, eip712: { name: 'USDC', version: '2' } },
    });
    for (const account of [info.accounts.deployer, info.accounts.treasury, info.accounts.payer, info.accounts.merchant, ...info.accounts.relayers]) {
      expect(new Wallet(account.privateKey).address).toBe(account.address);
    }
  });

  it('mints and approves through helpers that may run concurrently', async () => {
    const { payer, merchant, treasury } = devnet.accounts;
    const before = await devnet.balanceOf(payer.address);
    await Promise.all([devnet.mint(payer.address, 1n), devnet.mint(payer.address, 2n), devnet.approveTreasury(merchant.privateKey, 5n)]);
    expect(await devnet.balanceOf(payer.address)).toBe(before + 3n);
    expect(await devnet.allowance(merchant.address, treasury.address)).toBe(5n);
    await devnet.approveTreasury(merchant.privateKey, usdc('100'));
  });
});

describe('the human-readable token ABIs (the token reader\'s and EIP-3009\'s)', () => {
  it("matches functions and events of Circle's compiled ABI", () => {
    const compiled = new Interface(fiatTokenAbi());
    for (const fragment of new Interface([...FIAT_TOKEN_ABI, ...EIP3009_TOKEN_ABI]).fragments) {
      const signature = fragment.format('sighash');
      const found = fragment.type === 'event' ? compiled.getEvent(signature) : compiled.getFunction(signature);
      expect(found?.format('full')).toBe(fragment.format('full'));
    }
  });
});

describe('transferWithAuthorization on the real contract', () => {
  it('moves USDC with a (v, r, s) signature from ethers signTypedData, sent by a relayer', async () => {
    const { payer, merchant } = devnet.accounts;
    const signed = await devnet.signTransferAuthorization(payer.privateKey, { to: merchant.address, value: usdc('1.25') });
    const [payerBefore, merchantBefore] = await Promise.all([devnet.balanceOf(payer.address), devnet.balanceOf(merchant.address)]);

    const receipt = await (await tokenAs(relayer())[TRANSFER_WITH_AUTHORIZATION_VRS](...vrsArguments(signed))).wait();

    expect(receipt.status).toBe(1);
    expect(await devnet.balanceOf(payer.address)).toBe(payerBefore - usdc('1.25'));
    expect(await devnet.balanceOf(merchant.address)).toBe(merchantBefore + usdc('1.25'));
    expect(await devnet.usdc.authorizationState(payer.address, signed.authorization.nonce)).toBe(true);
    const used = receipt.logs.map((log: { topics: string[]; data: string }) => devnet.usdc.interface.parseLog(log)).find((e: { name: string } | null) => e?.name === 'AuthorizationUsed');
    expect(used?.args.toArray()).toEqual([payer.address, signed.authorization.nonce]);
  });

  it('moves USDC with the bytes-signature overload', async () => {
    const { payer, merchant } = devnet.accounts;
    const signed = await devnet.signTransferAuthorization(payer.privateKey, { to: merchant.address, value: 7n });
    const merchantBefore = await devnet.balanceOf(merchant.address);

    const receipt = await (await tokenAs(relayer(1))[TRANSFER_WITH_AUTHORIZATION_BYTES](...bytesArguments(signed))).wait();

    expect(receipt.status).toBe(1);
    expect(await devnet.balanceOf(merchant.address)).toBe(merchantBefore + 7n);
  });

  it('refuses a replay', async () => {
    const { payer, merchant } = devnet.accounts;
    const signed = await devnet.signTransferAuthorization(payer.privateKey, { to: merchant.address, value: 1n });
    const token = tokenAs(relayer());
    await (await token[TRANSFER_WITH_AUTHORIZATION_VRS](...vrsArguments(signed))).wait();
    const balanceAfterFirst = await devnet.balanceOf(payer.address);

    await expect(token[TRANSFER_WITH_AUTHORIZATION_VRS](...vrsArguments(signed))).rejects.toMatchObject({
      reason: 'FiatTokenV2: authorization is used or canceled',
    });
    await expect(token[TRANSFER_WITH_AUTHORIZATION_BYTES](...bytesArguments(signed))).rejects.toMatchObject({
      reason: 'FiatTokenV2: authorization is used or canceled',
    });
    expect(await devnet.balanceOf(payer.address)).toBe(balanceAfterFirst);
  });

  it("agrees with core's digest and recovery on what the payer signed", async () => {
    const { payer, merchant } = devnet.accounts;
    const signed = await devnet.signTransferAuthorization(payer.privateKey, { to: merchant.address, value: 3n });
    const separator = domainSeparator(devnet.eip712Domain);
    const recovered = recoverAuthorizationSigner(transferAuthorizationDigest(separator, signed.authorization), signed.signature);
    expect(recovered).toEqual({ ok: true, address: payer.address.toLowerCase() });
    await expect(tokenAs(relayer())[TRANSFER_WITH_AUTHORIZATION_BYTES].staticCall(...bytesArguments(signed))).resolves.toEqual([]);
  });

  it("refuses v = 0/1 in a bytes signature (ECRecover wants 27/28; core's recovery accepts it, see eip712.test.ts)", async () => {
    const { payer, merchant } = devnet.accounts;
    const signed = await devnet.signTransferAuthorization(payer.privateKey, { to: merchant.address, value: 1n });
    const { r, s, v } = Signature.from(signed.signature);
    const zeroBasedV = concat([r, s, hexlify(Uint8Array.of(v - 27))]);
    await expect(tokenAs(relayer())[TRANSFER_WITH_AUTHORIZATION_BYTES].staticCall(...bytesArguments(signed, zeroBasedV))).rejects.toMatchObject({
      reason: "ECRecover: invalid signature 'v' value",
    });
  });

  it('refuses an authorization signed by someone else', async () => {
    const { payer, merchant } = devnet.accounts;
    const signed = await devnet.signTransferAuthorization(Wallet.createRandom().privateKey, { to: merchant.address, value: 1n, nonce: hexlify(randomBytes(32)) });
    const forged = { ...signed, authorization: { ...signed.authorization, from: payer.address } };
    await expect(tokenAs(relayer())[TRANSFER_WITH_AUTHORIZATION_VRS].staticCall(...vrsArguments(forged))).rejects.toMatchObject({
      reason: 'FiatTokenV2: invalid signature',
    });
  });
});

describe('startDevnet options', () => {
  it('honours balances, allowance, relayer count and chain id', async () => {
    const custom = await startDevnet({ chainId: 8453, relayerCount: 3, payerBalance: 0n, merchantBalance: 5n, treasuryAllowance: 2n, payerEth: 10n });
    try {
      const { payer, merchant, treasury, relayers } = custom.accounts;
      expect(custom.chainId).toBe(8453);
      expect(relayers).toHaveLength(3);
      expect(await custom.provider.getBalance(relayers[2].address)).toBeGreaterThan(0n);
      expect(await custom.balanceOf(payer.address)).toBe(0n);
      expect(await custom.balanceOf(merchant.address)).toBe(5n);
      expect(await custom.allowance(merchant.address, treasury.address)).toBe(2n);
      expect(await custom.provider.getBalance(payer.address)).toBe(10n);
      expect(await custom.usdc.DOMAIN_SEPARATOR()).toBe(TypedDataEncoder.hashDomain({ ...custom.eip712Domain, chainId: 8453 }));
    } finally {
      await custom.stop();
    }
  });

  it('places the real token at a given address (a network\'s own USDC address), initialized there', async () => {
    const polygonUsdc = '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359';
    const placed = await startDevnet({ chainId: 137, tokenAddress: polygonUsdc, tokenName: 'USD Coin' });
    try {
      const { payer, merchant } = placed.accounts;
      expect(placed.token).toBe(polygonUsdc);
      expect(await placed.usdc.name()).toBe('USD Coin');
      expect(await placed.usdc.version()).toBe('2');
      expect(await placed.usdc.DOMAIN_SEPARATOR()).toBe(TypedDataEncoder.hashDomain({ name: 'USD Coin', version: '2', chainId: 137, verifyingContract: polygonUsdc }));
      const signed = await placed.signTransferAuthorization(payer.privateKey, { to: merchant.address, value: 7n });
      const relayer = new Wallet(placed.accounts.relayers[0].privateKey, placed.provider);
      const { v, r, s } = Signature.from(signed.signature);
      const a = signed.authorization;
      const sent = await (placed.usdc.connect(relayer) as Contract).getFunction(TRANSFER_WITH_AUTHORIZATION_VRS)(a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, v, r, s);
      await sent.wait();
      expect(await placed.balanceOf(merchant.address)).toBe(usdc('1000') + 7n);
    } finally {
      await placed.stop();
    }
  });
});
