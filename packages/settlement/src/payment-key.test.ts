import { paymentKeyOf } from './payment-key';

const TOKEN = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const PAYER = '0xAbCdEf0000000000000000000000000000000001';
const NONCE = '0x' + 'AB'.repeat(32);

describe('paymentKeyOf', () => {
  it('spells an EVM payment as before records had a network: chainId:space:payer:nonce, lowercased', () => {
    const key = paymentKeyOf({ network: 'eip155:84532', chainId: 84532, nonceSpace: TOKEN, payer: PAYER, nonce: NONCE });
    // the literal a row stored before this change holds (its unique index must keep matching)
    expect(key).toBe(`84532:0x036cbd53842c5426634e7929541ec2318f3dcf7e:0xabcdef0000000000000000000000000000000001:0x${'ab'.repeat(32)}`);
    // one address whatever its case
    expect(paymentKeyOf({ network: 'eip155:84532', chainId: 84532, nonceSpace: TOKEN.toLowerCase(), payer: PAYER.toLowerCase(), nonce: NONCE })).toBe(key);
  });

  it("spells another family's payment by its CAIP-2 id, keeping the case of its base58 addresses", () => {
    const network = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
    const payer = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
    const mint = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
    const key = paymentKeyOf({ network, chainId: 0, nonceSpace: mint, payer, nonce: 'Nonce5Xy' });
    expect(key).toBe(`${network}:${mint}:${payer}:Nonce5Xy`);
    // a payer whose address differs only in case is another payer, hence another payment
    expect(paymentKeyOf({ network, chainId: 0, nonceSpace: mint, payer: payer.toLowerCase(), nonce: 'Nonce5Xy' })).not.toBe(key);
  });
});
