import { X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import { AMOUNT, FakeContractReads, NONCE, PAYEE, PAYER, SIGNATURE, settledLog, transferLog, uptoPayment } from '../testing/permit2-chain';
import type { MechanismChain } from '../chain-port';
import { uptoPermit2 } from '.';
import { uptoSettleCalldata } from './proxy-calldata';

const payment = uptoPayment();
const ROUTER = '0x' + '55'.repeat(20);

/** a transaction sent to the upto proxy with this calldata, which moved `value` to the payee */
function proxySettle(chain: FakeContractReads, hash: string, value: bigint, calldata = uptoSettleCalldata(payment.payload, value, SIGNATURE)) {
  chain.mine({ hash, to: X402_UPTO_PERMIT2_PROXY, data: calldata, logs: [transferLog(PAYER, PAYEE, value, 0), settledLog(1, 'Settled()', X402_UPTO_PERMIT2_PROXY)] });
}

const find = (chain: FakeContractReads) => uptoPermit2.evmExecution!.findExecution(payment, chain as unknown as MechanismChain);

describe('finding who executed an upto payment', () => {
  it('answers none while its nonce is free', async () => {
    const chain = new FakeContractReads();
    proxySettle(chain, '0xaaa', 10n);
    expect(await find(chain)).toBeUndefined();
  });

  it('finds the upto proxy call that spent its nonce, for an amount below the maximum, and what it paid', async () => {
    const chain = new FakeContractReads();
    chain.spend(PAYER, NONCE);
    // another payment of the payer's to the same payee, another nonce: not this one
    proxySettle(chain, '0xbbb', 300n, uptoSettleCalldata({ ...payment.payload, nonce: NONCE + 1n }, 300n, SIGNATURE));
    proxySettle(chain, '0xccc', 400_000n);
    expect(await find(chain)).toEqual({ txHash: '0xccc', block: 100, to: X402_UPTO_PERMIT2_PROXY, paidToPayee: 400_000n });
  });

  it('does not take a transfer above the maximum, nor one the exact proxy made, for this payment', async () => {
    const chain = new FakeContractReads();
    chain.spend(PAYER, NONCE);
    chain.mine({ hash: '0xddd', to: X402_UPTO_PERMIT2_PROXY, data: uptoSettleCalldata(payment.payload, AMOUNT, SIGNATURE), logs: [transferLog(PAYER, PAYEE, AMOUNT + 1n, 0), settledLog(1, 'Settled()', X402_UPTO_PERMIT2_PROXY)] });
    chain.mine({ hash: '0xeee', to: ROUTER, data: '0x12345678', logs: [transferLog(PAYER, PAYEE, 5n, 0), settledLog(1)] });
    expect(await find(chain)).toBeUndefined();
  });

  it('is unattributed when a contract reached the upto proxy', async () => {
    const chain = new FakeContractReads();
    chain.spend(PAYER, NONCE);
    chain.mine({ hash: '0xfff', to: ROUTER, data: '0x12345678', logs: [transferLog(PAYER, PAYEE, 5n, 0), settledLog(1, 'Settled()', X402_UPTO_PERMIT2_PROXY)] });
    expect(await find(chain)).toEqual({ unattributed: expect.stringContaining(`transaction 0xfff paid the payee the amount through the upto proxy from a contract (${ROUTER})`) });
  });
});
