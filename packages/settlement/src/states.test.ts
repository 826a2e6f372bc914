import { canTransition, isFinal, statusOf, TRANSITIONS } from './states';

describe('settlement transition table', () => {
  it('follows the spec: pending → check_allowance → collect_fee → fee_collected → executing → settled', () => {
    const path = ['pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled'] as const;
    for (let i = 0; i < path.length - 1; i++) expect(canTransition(path[i], path[i + 1])).toBe(true);
  });

  it('lets every working state fail, and nothing leave a final state', () => {
    for (const state of ['pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing'] as const) {
      expect(canTransition(state, 'failed')).toBe(true);
    }
    expect(TRANSITIONS.settled).toEqual([]);
    expect(TRANSITIONS.failed).toEqual([]);
    expect(isFinal('settled') && isFinal('failed')).toBe(true);
  });

  it('never moves money out of order: no fee skipped, no transfer before the fee', () => {
    expect(canTransition('pending', 'collect_fee')).toBe(false);
    expect(canTransition('check_allowance', 'fee_collected')).toBe(false);
    expect(canTransition('collect_fee', 'executing')).toBe(false);
  });

  it('goes to settled before any fee only as a payment another transaction executed (its own table entry)', () => {
    // pending (the pre-flight) and collect_fee (the atomic item, the batch estimate) find the payment paid by
    // someone else: settled with no fee of ours; nothing else skips the fee
    expect(TRANSITIONS.pending.filter((to) => to === 'settled')).toEqual(['settled']);
    expect(TRANSITIONS.collect_fee.filter((to) => to === 'settled')).toEqual(['settled']);
    expect(canTransition('check_allowance', 'settled')).toBe(false);
    expect(canTransition('deploying_wallet', 'settled')).toBe(false);
  });

  it('maps states to the status values of status records', () => {
    expect(statusOf('executing')).toBe('pending');
    expect(statusOf('settled')).toBe('settled');
    expect(statusOf('failed')).toBe('failed');
  });
});
