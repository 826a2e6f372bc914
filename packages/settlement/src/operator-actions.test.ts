import { OperatorActions } from './operator-actions';

/**
 * `pending → settled` and `collect_fee → settled` are in the transition table only for a payment another
 * transaction executed (settledOnExecution: its block stored and watched to finality). An operator's resolve
 * stores no block, so it may not use them (docs/decisions/settlement.md, "Paid by another transaction: the
 * review's findings").
 */
function parkedIn(state: string) {
  const row: Record<string, unknown> = { id: 'stl_1', state, attentionAt: new Date(), feeTxHash: null };
  const transitions: Array<{ from: string; to: string }> = [];
  const settlements = {
    findById: async () => ({ ...row }),
    findWithVerification: async () => ({ ...row, verification: { webhookUrl: null } }),
    transition: async (req: { from: string; to: string }) => {
      transitions.push({ from: req.from, to: req.to });
      row.state = req.to;
      return { ...row };
    },
    clearAttention: async () => undefined,
  };
  const actions = new OperatorActions(settlements as never, {} as never, { enqueue: async () => undefined } as never);
  return { actions, transitions };
}

it.each(['pending', 'collect_fee'])('an operator cannot resolve a settlement parked in %s as settled: nothing of ours paid and no block would be watched', async (state) => {
  const { actions, transitions } = parkedIn(state);
  await expect(actions.resolve('stl_1', { outcome: 'settled', note: 'looked paid', txHash: '0xabc' })).rejects.toThrow(
    `a settlement in ${state} cannot be resolved as settled`,
  );
  expect(transitions).toEqual([]);
});

it.each(['pending', 'collect_fee'])('an operator can still resolve a settlement parked in %s as failed', async (state) => {
  const { actions, transitions } = parkedIn(state);
  await actions.resolve('stl_1', { outcome: 'failed', note: 'doomed' });
  expect(transitions).toEqual([{ from: state, to: 'failed' }]);
});

it.each(['fee_collected', 'executing'])('an operator can still resolve a settlement parked in %s (our transfer may have paid) as settled', async (state) => {
  const { actions, transitions } = parkedIn(state);
  await actions.resolve('stl_1', { outcome: 'settled', note: 'transfer 0xabc confirmed', txHash: '0xabc' });
  expect(transitions).toEqual([{ from: state, to: 'settled' }]);
});
