// The reference facilitator's process (see reference-facilitator.ts): @x402/core's x402Facilitator with
// @x402/evm's exact scheme and its upto scheme on a viem wallet client, behind POST /verify, POST /settle and
// GET /supported. @x402/evm has no register helper for upto, so `UptoEvmScheme` is registered on the network
// as `registerExactEvmScheme` registers exact; its signer's address is the `facilitatorAddress` /supported
// advertises, the one sender an upto payer's witness names.
// Configured by the environment its launcher sets (REFERENCE_PORT, REFERENCE_RPC_URL, REFERENCE_KEY,
// REFERENCE_POLLING_MS); it imports nothing of the facilitator, and of the benchmark only the reference's signer.
import express from 'express';
import { x402Facilitator } from '@x402/core/facilitator';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { UptoEvmScheme } from '@x402/evm/upto/facilitator';
import { baseSepolia } from 'viem/chains';
import { referenceSigner } from './reference-signer';

function serve(): void {
  const port = Number(process.env.REFERENCE_PORT);
  const signer = referenceSigner(process.env.REFERENCE_KEY!, process.env.REFERENCE_RPC_URL!, {
    pollingInterval: Number(process.env.REFERENCE_POLLING_MS ?? 100),
    manageNonces: true,
  });
  const network = `eip155:${baseSepolia.id}` as const;
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: network }).register(network, new UptoEvmScheme(signer));

  const fail = (what: string, err: unknown) => {
    // one JSON line, the way our apps log, so the benchmark counts it
    process.stderr.write(JSON.stringify({ level: 'error', message: `reference ${what} failed`, error: err instanceof Error ? err.message : String(err) }) + '\n');
  };
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.get('/supported', (_req, res) => {
    res.json(facilitator.getSupported());
  });
  app.post('/verify', async (req, res) => {
    try {
      const result = await facilitator.verify(req.body.paymentPayload, req.body.paymentRequirements);
      if (!result.isValid) process.stderr.write(JSON.stringify({ level: 'warn', message: `reference verify: ${result.invalidReason}`, detail: result }) + '\n');
      res.json(result);
    } catch (err) {
      fail('verify', err);
      res.status(500).json({ isValid: false, invalidReason: 'unexpected_verify_error', invalidMessage: (err as Error).message });
    }
  });
  app.post('/settle', async (req, res) => {
    try {
      const result = await facilitator.settle(req.body.paymentPayload, req.body.paymentRequirements);
      if (!result.success) process.stderr.write(JSON.stringify({ level: 'warn', message: `reference settle: ${result.errorReason}`, detail: result }) + '\n');
      res.json(result);
    } catch (err) {
      fail('settle', err);
      res.status(500).json({ success: false, errorReason: 'unexpected_settle_error', errorMessage: (err as Error).message, transaction: '', network: req.body?.paymentRequirements?.network ?? '' });
    }
  });
  const server = app.listen(port, '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

serve();
