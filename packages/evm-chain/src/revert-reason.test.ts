import { AbiCoder, concat, makeError } from 'ethers';
import { decodeRevert, decodeRevertData } from './revert-reason';

const abi = AbiCoder.defaultAbiCoder();
const errorString = (reason: string) => concat(['0x08c379a0', abi.encode(['string'], [reason])]);

describe('decodeRevert', () => {
  it('decodes Error(string), Panic(uint256) and names custom errors by selector', () => {
    expect(decodeRevertData(errorString('ERC20: transfer amount exceeds balance'))).toBe('ERC20: transfer amount exceeds balance');
    expect(decodeRevertData(concat(['0x4e487b71', abi.encode(['uint256'], [0x11])]))).toBe('panic 0x11');
    expect(decodeRevertData('0xdeadbeef')).toBe('custom error 0xdeadbeef');
    expect(decodeRevertData('0x')).toBeUndefined();
  });

  it('reads the revert data of an ethers CALL_EXCEPTION', () => {
    const data = errorString('FiatTokenV2: authorization is used or canceled');
    const error = makeError('execution reverted', 'CALL_EXCEPTION', { info: { error: { code: 3, message: 'execution reverted', data } } } as never);
    expect(decodeRevert(error)).toEqual({ reason: 'FiatTokenV2: authorization is used or canceled', data });
  });

  it("falls back to the node's message, then to a generic reason", () => {
    expect(decodeRevert({ error: { message: 'execution reverted: Pausable: paused' } })).toEqual({ reason: 'Pausable: paused' });
    expect(decodeRevert(new Error('execution reverted'))).toEqual({ reason: 'execution reverted' });
  });
});
