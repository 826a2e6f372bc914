// Distinct, valid EIP-3009 payments, made fast enough to pre-generate tens of thousands before a run.
// ethers' signTypedData takes 1-2 ms each; hashing with the hand-written EIP-712 encoder and signing the
// digest with libsecp256k1 takes a few microseconds, so generation never limits the benchmark.
import { randomBytes } from 'node:crypto';
import { Signature, verifyTypedData } from 'ethers';
import type { Devnet } from '@facilitator/evm-devnet';
import { authorizationToJson, domainSeparator, type TransferAuthorization } from '@facilitator/core';
import { recoverAuthorizationSigner, TRANSFER_WITH_AUTHORIZATION_TYPES, transferAuthorizationDigest } from '@facilitator/payment-mechanisms';

// The `secp256k1` package's index silently falls back to pure-JS elliptic; its `bindings` entry is native only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const native = require('secp256k1/bindings') as {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
};

export const PRICE_UNITS = 10_000n; // "$0.01"

export interface SignedPayment {
  authorization: ReturnType<typeof authorizationToJson>;
  /** 65 bytes r ‖ s ‖ v, v 27 or 28, as x402 clients send it */
  signature: string;
}

export class PaymentFactory {
  private readonly separator: Uint8Array;
  private readonly key: Buffer;
  private readonly from: string;

  constructor(private readonly devnet: Devnet) {
    this.separator = domainSeparator(devnet.eip712Domain);
    this.key = Buffer.from(devnet.accounts.payer.privateKey.slice(2), 'hex');
    this.from = devnet.accounts.payer.address;
  }

  /** A payment of $0.01 to the devnet merchant, valid for an hour, with a random nonce. */
  make(): SignedPayment {
    const auth: TransferAuthorization = {
      from: this.from,
      to: this.devnet.accounts.merchant.address,
      value: PRICE_UNITS,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: '0x' + randomBytes(32).toString('hex'),
    };
    // libsecp256k1 always produces low-s signatures, which USDC requires
    const { signature, recid } = native.ecdsaSign(transferAuthorizationDigest(this.separator, auth), this.key);
    return {
      authorization: authorizationToJson(auth),
      signature: '0x' + Buffer.from(signature).toString('hex') + (27 + recid).toString(16),
    };
  }

  /** Form A verify/settle body (x402Version 2): what the x402 middleware sends. */
  formA(payment: SignedPayment): Record<string, unknown> {
    return {
      payment: { x402Version: 2, payload: { authorization: payment.authorization, signature: payment.signature } },
      requirements: {
        scheme: 'exact',
        price: '$0.01',
        network: `eip155:${this.devnet.chainId}`,
        payTo: this.devnet.accounts.merchant.address,
        token: this.devnet.token,
      },
    };
  }

  /**
   * Checks payments against two independent implementations: ethers' generic typed-data verifier, and the
   * facilitator's own recovery. A benchmark of invalid payments would measure the rejection path.
   */
  check(payments: readonly SignedPayment[]): void {
    for (const p of payments) {
      const a = p.authorization;
      const message = { ...a, value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore) };
      const byEthers = verifyTypedData(this.devnet.eip712Domain, TRANSFER_WITH_AUTHORIZATION_TYPES, message, p.signature);
      const digest = transferAuthorizationDigest(this.separator, message);
      const byCore = recoverAuthorizationSigner(digest, p.signature);
      if (byEthers !== a.from || !byCore.ok || byCore.address.toLowerCase() !== a.from.toLowerCase()) {
        throw new Error(`generated payment does not verify: ${JSON.stringify(p)}`);
      }
      Signature.from(p.signature); // throws on a malformed or non-canonical signature
    }
  }
}

/** Pre-serialized request bodies: stringifying during the run would take CPU from the server being measured. */
export function makeBodies(factory: PaymentFactory, count: number): string[] {
  const bodies = new Array<string>(count);
  const sample: SignedPayment[] = [];
  for (let i = 0; i < count; i++) {
    const payment = factory.make();
    if (i < 5) sample.push(payment);
    bodies[i] = JSON.stringify(factory.formA(payment));
  }
  factory.check(sample);
  return bodies;
}
