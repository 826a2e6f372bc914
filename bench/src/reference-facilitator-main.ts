// The reference facilitator's process (see reference-facilitator.ts): @x402/core's x402Facilitator with
// @x402/evm's exact scheme on a viem wallet client, behind POST /verify, POST /settle and GET /supported.
// Configured by the environment its launcher sets (REFERENCE_PORT, REFERENCE_RPC_URL, REFERENCE_KEY,
// REFERENCE_POLLING_MS); it imports nothing of the facilitator or the benchmark.
import express from 'express';
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, http, nonceManager, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { baseSepolia } from 'viem/chains';

function serve(): void {
  const port = Number(process.env.REFERENCE_PORT);
  const account = privateKeyToAccount(process.env.REFERENCE_KEY as `0x${string}`, { nonceManager });
  const client = createWalletClient({
    account,
    chain: baseSepolia,
    transport: http(process.env.REFERENCE_RPC_URL),
    pollingInterval: Number(process.env.REFERENCE_POLLING_MS ?? 100),
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    getCode: (args) => client.getCode(args),
    readContract: (args) => client.readContract({ ...args, args: args.args ?? [] } as Parameters<typeof client.readContract>[0]),
    verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    writeContract: (args) => client.writeContract(args as Parameters<typeof client.writeContract>[0]),
    sendTransaction: (args) => client.sendTransaction(args),
    waitForTransactionReceipt: async (args) => {
      const receipt = await client.waitForTransactionReceipt(args);
      return { status: receipt.status, logs: receipt.logs };
    },
  });
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: `eip155:${baseSepolia.id}` });

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
