// BENCHMARKS.md section of bench:custody: the relayer key in the worker's environment, in KMS (protocol
// server) and in an HSM (SoftHSM2), side by side on the atomic path.
import type { LogProblems } from './app-logs';
import type { CustodyResults } from './custody-bench';
import { header, interference, n, row } from './report-load';

const EXPECTED_WARNING = 'the executor and this worker name different relayer keys';

function problemLine(label: string, p: LogProblems | undefined): string {
  // the three facilitators share one treasury, so its executor names all three relayers and each worker
  // says it holds only one of them: expected here, and left out
  const messages = (p?.messages ?? []).filter((m) => !m.message.startsWith(EXPECTED_WARNING));
  if (messages.length === 0) return `- ${label}: no warning or error lines (besides the expected one above).`;
  return `- ${label}: ${messages.map((m) => `${m.level} ×${m.count} “${m.message}”`).join('; ')}.`;
}

export function custodySection(r: CustodyResults): string[] {
  const s = r.settings;
  const ratio = (t: CustodyResults['targets'][number], key: 'paidP50' | 'settledPerSecond' | 'signP50', digits: number) =>
    t.custody === 'local' ? '1.00' : n(r.ratios[t.custody]?.[key], digits);
  const notSettled = r.targets.filter((t) => t.paid.paid !== t.paid.requests || t.paid.settlements?.settled !== t.paid.requests || t.capacity.settled !== t.capacity.requested);
  return [
    '## Relayer keys in the environment, in KMS and in an HSM: `npm run bench:custody`',
    '',
    `Measured ${r.startedAt}${r.versions?.commit ? ` at commit ${r.versions.commit}` : ''}.`,
    '',
    `One anvil with ${s.blockTimeSeconds} s blocks and three of our facilitators on it, all on the atomic path with workers that hold no treasury key, each sending from one relayer key held differently: ` +
      'in the worker\'s environment (`RELAYER_PRIVATE_KEYS`); in AWS KMS (`RELAYER_SIGNERS=kms:<arn>`, @aws-sdk/client-kms against a local server speaking KMS\'s JSON protocol with SigV4, signing with a real secp256k1 key: a real KMS adds its network round trip, a few ms within a region); ' +
      'and in a PKCS#11 HSM (`RELAYER_SIGNERS=pkcs11:…`, a non-extractable key in SoftHSM2). The treasury\'s settlement executor names the three relayers. ' +
      `Each facilitator is the compiled API (API_PROCESSES=${s.apiProcesses}) and worker with a database of its own. ` +
      `**sign**: ${s.signSamples} \`signDigest\` calls per signer in the benchmark's process, one at a time, by the signer code the worker uses. ` +
      `**paid request**: ${s.paidRequests} paid requests per facilitator through @x402/express and @x402/fetch (as bench:paid: 0.05 USDC, timed from the client's call to the resource's body), one at a time for each, the three at once, a random 0–${s.jitterMs} ms pause before each; ${s.warmupRequests} per facilitator warm up first. ` +
      `**settle capacity**: ${s.capacitySettlements} Form B settle requests of payments verified before, ${s.capacityConnections} in flight, one facilitator after the other; settled/s from the first request to the last \`settled\` row.`,
    '',
    ...header(['relayer key', 'sign p50 / p99 ms', 'paid p50 / p95 ms', 'request → `settled` p50 ms', 'capacity settled/s', 'settled / requested', 'settle transactions (mean batch)', 'worker CPU cores', '÷ local (sign p50 / paid p50 / settled/s)']),
    ...r.targets.map((t) =>
      row([
        t.label,
        `${n(t.signMs.p50, 2)} / ${n(t.signMs.p99, 2)}`,
        `**${n(t.paid.latencyMs.p50)}** / ${n(t.paid.latencyMs.p95)}`,
        n(t.paid.requestToSettledMs?.p50),
        `**${n(t.capacity.perSecond, 1)}**`,
        `${t.capacity.settled} / ${t.capacity.requested}`,
        `${t.capacity.settleTransactions} (${n(t.capacity.meanBatchSize, 1)})`,
        n(t.capacity.cpu.cores.worker, 2),
        `${ratio(t, 'signP50', 1)} / ${ratio(t, 'paidP50', 2)} / ${ratio(t, 'settledPerSecond', 2)}`,
      ]),
    ),
    '',
    `- Every paid request paid and every settlement settled, once: ${r.allSettled ? '**yes**' : '**no**'}.`,
    ...r.targets.filter((t) => t.capacity.kmsSignCalls !== undefined).map((t) => `- KMS \`Sign\` calls during the capacity burst: ${t.capacity.kmsSignCalls} for ${t.capacity.settleTransactions} settle transactions (one signature per transaction sent, replacements included).`),
    ...notSettled.map((t) => `- ⚠ ${t.label}: paid ${t.paid.paid} of ${t.paid.requests}${t.paid.firstError ? ` (first failure: ${t.paid.firstError})` : ''}; capacity ${t.capacity.settled} settled, ${t.capacity.failed} failed, ${t.capacity.unfinished} unfinished, ${t.capacity.rejected} refused.`),
    ...interference(Math.max(...r.targets.map((t) => t.capacity.cpu.cores.other ?? 0))),
    '',
    'Warning and error lines written during the run (each worker also says, as expected here, that the executor names relayer keys it does not hold: the other two facilitators\'):',
    '',
    ...r.targets.map((t) => problemLine(`${t.label} (API and worker)`, r.problems[t.custody])),
    '',
  ];
}
