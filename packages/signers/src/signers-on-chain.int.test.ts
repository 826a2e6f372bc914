// What each backend signs is accepted by a node: a type-2 transfer and a type-4 transaction carrying the
// signer's own EIP-7702 authorization, sent raw to anvil and mined from the signer's address.
import { Wallet, getAddress, parseEther, type TransactionReceipt } from 'ethers';
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { createSoftHsmToken, startKmsProtocolServer, type KmsProtocolServer, type SoftHsmToken } from '@facilitator/signers/testing';
import { describeNeeding, softhsmMissing } from '../../../test/support/system-tools';
import { signAuthorization, signTransaction } from './ethereum-signing';
import type { Signer } from './signer';
import { createSigner } from './signer-spec';

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ relayerCount: 1 });
});
afterAll(async () => {
  await devnet?.stop();
});

async function send(raw: string): Promise<TransactionReceipt> {
  const sent = await devnet.provider.broadcastTransaction(raw);
  const receipt = await devnet.provider.waitForTransaction(sent.hash, 1, 30_000);
  if (!receipt) throw new Error(`no receipt for ${sent.hash}`);
  return receipt;
}

/** Funds the signer with ETH, then sends and sees mined: a transfer (type 2) and its own delegation (type 4). */
function settlesOnChain(name: string, open: () => Promise<Signer>): void {
  describe(`${name} on anvil`, () => {
    let signer: Signer;
    beforeAll(async () => {
      signer = await open();
      await devnet.setEthBalance(signer.address, parseEther('1'));
    });
    afterAll(async () => {
      await signer?.close();
    });

    it('sends a type-2 transaction mined from its address', async () => {
      const to = Wallet.createRandom().address;
      const fees = await devnet.provider.getFeeData();
      const nonce = await devnet.provider.getTransactionCount(signer.address, 'pending');
      const raw = await signTransaction(signer, {
        type: 2,
        chainId: devnet.chainId,
        nonce,
        to,
        value: 12_345n,
        gasLimit: 21_000n,
        maxFeePerGas: fees.maxFeePerGas!,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas!,
      });
      const receipt = await send(raw);
      expect({ status: receipt.status, from: receipt.from }).toEqual({ status: 1, from: signer.address });
      expect(await devnet.provider.getBalance(to)).toBe(12_345n);
    });

    it('delegates its own account by a type-4 transaction carrying its EIP-7702 authorization', async () => {
      // a delegate without code: the call to the signer's own account then runs nothing and succeeds
      const delegate = Wallet.createRandom().address;
      const fees = await devnet.provider.getFeeData();
      const nonce = await devnet.provider.getTransactionCount(signer.address, 'pending');
      // the sender's nonce is used by the transaction before the authorization is applied: hence nonce + 1
      const authorization = await signAuthorization(signer, { address: delegate, nonce: nonce + 1, chainId: devnet.chainId });
      const raw = await signTransaction(signer, {
        type: 4,
        chainId: devnet.chainId,
        nonce,
        to: signer.address,
        gasLimit: 100_000n,
        maxFeePerGas: fees.maxFeePerGas!,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas!,
        authorizationList: [authorization],
      });
      const receipt = await send(raw);
      expect({ status: receipt.status, from: receipt.from }).toEqual({ status: 1, from: signer.address });
      expect(await devnet.provider.getCode(signer.address)).toBe('0xef0100' + getAddress(delegate).slice(2).toLowerCase());
    });
  });
}

settlesOnChain('a local key', async () => createSigner(`local:${Wallet.createRandom().privateKey}`));

describe('AWS KMS (protocol server)', () => {
  let kms: KmsProtocolServer;
  beforeAll(async () => {
    kms = await startKmsProtocolServer();
  });
  afterAll(async () => {
    await kms?.close();
  });
  settlesOnChain('a KMS key', async () => createSigner(`kms:${kms.createKey().arn}`, kms.env));
});

describeNeeding(softhsmMissing(), 'PKCS#11 (SoftHSM2)', () => {
  let token: SoftHsmToken;
  let uri: string;
  beforeAll(async () => {
    token = await createSoftHsmToken({ label: `on-chain-${process.pid}` });
    ({ uri } = await token.generateKey('relayer-1'));
  });
  afterAll(async () => {
    await token?.destroy();
  });
  settlesOnChain('a key in SoftHSM', async () => createSigner(uri));
});
