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

  // a database writer (a compromised API) stores a copy of a verification naming another network than its chain's:
  // a key spelt from it would differ from the honest key of the same payment, so both could be live at once
  it("refuses an EVM network that is not its chain's, rather than spell the same payment a second way", () => {
    const honest = { network: 'eip155:84532', chainId: 84532, nonceSpace: TOKEN, payer: PAYER, nonce: NONCE };
    expect(() => paymentKeyOf({ ...honest, network: 'eip155:1' })).toThrow('payment on network eip155:1 is stored on chain 84532: the two disagree');
    expect(() => paymentKeyOf({ ...honest, network: 'eip155:084532' })).toThrow('the two disagree');
    expect(paymentKeyOf(honest)).toMatch(/^84532:/);
  });

  it('refuses a network no family has (a namespace in another case, or none), rather than spell it as written', () => {
    const honest = { network: 'eip155:84532', chainId: 84532, nonceSpace: TOKEN, payer: PAYER, nonce: NONCE };
    for (const network of ['EIP155:84532', 'cosmos:cosmoshub-4', '84532', '']) {
      expect(() => paymentKeyOf({ ...honest, network })).toThrow(`payment on network ${JSON.stringify(network)}: no chain family has that network`);
    }
  });
});
