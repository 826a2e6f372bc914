import { outcomeOf } from './transaction-outcome';

const status = (confirmationStatus: 'processed' | 'confirmed' | 'finalized' | null, err: unknown = null) => ({ confirmationStatus, err: err as never, slot: 10n });

describe('outcomeOf', () => {
  it('an unknown signature is pending while its lifetime lasts, expired after: it can never land', () => {
    expect(outcomeOf(undefined, false)).toBe('pending');
    expect(outcomeOf(undefined, true)).toBe('expired');
  });

  it('a success reads at its commitment; processed is still pending (a fork may drop it), even past its lifetime', () => {
    expect(outcomeOf(status('processed'), false)).toBe('pending');
    expect(outcomeOf(status('processed'), true)).toBe('pending');
    expect(outcomeOf(status(null), true)).toBe('pending');
    expect(outcomeOf(status('confirmed'), false)).toBe('confirmed');
    expect(outcomeOf(status('finalized'), true)).toBe('finalized');
  });

  it('a landed failure is failed, saying whether that is final', () => {
    const err = { InstructionError: [1n, { Custom: 1n }] };
    expect(outcomeOf(status('processed', err), false)).toBe('pending');
    expect(outcomeOf(status('confirmed', err), false)).toEqual({ failed: err, finalized: false });
    expect(outcomeOf(status('finalized', err), true)).toEqual({ failed: err, finalized: true });
  });
});
