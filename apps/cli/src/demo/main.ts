/**
 * `npm run demo`: one complete payment against the stack `npm run dev` started. The merchant approves
 * the treasury, the payer signs an EIP-3009 authorization, the API verifies (Form B, with a webhook URL)
 * and settles it, the worker collects the fee and executes the transfer, and the webhooks arrive here,
 * where their signatures are checked. Prints every step with its transaction hashes, and the balances
 * before and after.
 */
import { existsSync } from 'node:fs';
import { Command, Option } from 'commander';
import { parseUnits, Wallet } from 'ethers';
import { readDevnetInfo, signTransferAuthorization, type DevnetInfo } from '@facilitator/evm-devnet';
import { EnvReader } from '@facilitator/config';
import { authorizationToJson, networkByChainId } from '@facilitator/core';
import { MERCHANT_REQUEST_DOMAIN_PATH, MerchantAction, signingTargetOf, signMerchantRequest, type PublishedMerchantRequestDomain } from '@facilitator/merchants';
import { verifyWebhookDelivery } from '@facilitator/webhooks';
import { ApiClient, ApiError, DEFAULT_API_URL } from '../api-client';
import { connectChain, type ChainConnection } from '../chain-context';
import { devnetFilePath } from '../dev-stack-defaults';
import { CliError, oneLine } from '../errors';
import { formatDelta, formatToken, parseWholeNumber, redactUrl, table } from '../format';
import { approveProgressPrinter, stdoutOutput } from '../output';
import { sendApprove } from '../send-approve';
import { WebhookListener, type Delivery } from './webhook-listener';
import { setTimeout as sleep } from 'node:timers/promises';

const SETTLE_TIMEOUT_MS = 60_000;
const WEBHOOK_TIMEOUT_MS = 30_000;

interface DemoFlags {
  api: string;
  apiKey?: string;
  /** the merchant's settle key: needed once the merchant turned settle protection on */
  settleKey?: string;
  devnetFile: string;
  price: string;
  settlements: string;
}

interface Balances {
  payer: bigint;
  merchant: bigint;
  treasury: bigint;
  allowance: bigint;
}

interface SettlementRecord {
  id: string;
  status: string;
  state: string;
  details: { fee_amount: string; fee_tx_hash: string | null; settlement_tx_hash: string | null };
  error?: { code: string; message: string };
}

const out = stdoutOutput();
const step = stdoutOutput('   ');

async function demo(flags: DemoFlags): Promise<void> {
  const reader = new EnvReader(process.env);
  // the merchant's side: WEBHOOK_SECRET, when set, is the secret to check with (as for verify-webhook)
  const secretOverride = reader.raw('WEBHOOK_SECRET');
  const fee = reader.bigint('FEE_AMOUNT', 10_000n);
  const settlements = parseWholeNumber('--settlements', flags.settlements, 1n, 1_000_000n);
  const info = readDevnet(flags.devnetFile);
  const { decimals, symbol } = info.token;
  const price = parsePrice(flags.price, decimals);
  const usdc = (units: bigint) => formatToken(units, decimals, symbol);
  const api = new ApiClient(flags.api, flags.apiKey, flags.settleKey);
  await checkReady(api);

  const network = networkByChainId(info.chainId);
  const caip2 = network?.caip2 ?? `eip155:${info.chainId}`;
  const chain = await connectChain({
    // a devnet on a chain id the registry does not know: Base Sepolia's defaults, under its own names
    network: network ?? { ...networkByChainId(84532)!, chainId: info.chainId, caip2, legacyName: caip2, legacyAliases: [], label: caip2, publicRpcUrl: info.rpcUrl, usdc: { address: info.token.address, eip712: info.token.eip712 } },
    rpcUrl: info.rpcUrl,
    rpcSource: flags.devnetFile,
    tokenAddress: info.token.address,
    feeAmount: fee,
    confirmations: 1,
  });
  const listener = new WebhookListener();
  try {
    const { payer, merchant, treasury } = info.accounts;
    const secret = secretOverride ?? (await merchantWebhookSecret(api, new Wallet(merchant.privateKey)));
    const webhookUrl = await listener.start('/demo-webhook');
    out.line(`x402 facilitator demo: one payment, end to end, against ${api.baseUrl}`);
    out.line(
      table(
        [
          ['chain', `${redactUrl(info.rpcUrl)} (${caip2}), ${symbol} ${info.token.address}`],
          ['payer', payer.address],
          ['merchant', merchant.address],
          ['treasury', treasury.address],
          ['webhooks', `${webhookUrl} (signatures checked with ${secretOverride ? 'WEBHOOK_SECRET' : "the merchant's own secret, fetched with a request signed by its key"})`],
        ],
        '  ',
      ),
    );
    const before = await balances(chain, info);
    printBalances('Balances before', before);

    out.line();
    const wanted = fee * settlements;
    // never lowers what the merchant granted (the dev stack grants 100 USDC): only raises it when short
    if (before.allowance >= wanted) {
      out.line(`1. The merchant's allowance to the treasury, ${usdc(before.allowance)}, already covers ${settlements} settlements (fee ${usdc(fee)} each): no transaction`);
    } else {
      out.line(`1. The merchant approves the treasury for ${settlements} settlements: ${usdc(wanted)} (fee ${usdc(fee)} each; it allowed ${usdc(before.allowance)})`);
      await sendApprove({
        wallet: new Wallet(merchant.privateKey),
        provider: chain.provider,
        token: info.token.address,
        spender: treasury.address,
        amount: wanted,
        confirmations: 1,
        onProgress: approveProgressPrinter(step),
      });
    }

    out.line(`2. The payer signs a transfer authorization: ${usdc(price)} to the merchant (no gas, no transaction)`);
    const domain = { name: info.token.eip712.name, version: info.token.eip712.version, chainId: info.chainId, verifyingContract: info.token.address };
    const { authorization, signature } = await signTransferAuthorization(payer.privateKey, domain, { to: merchant.address, value: price });
    step.line(`nonce ${authorization.nonce}, valid until ${new Date(Number(authorization.validBefore) * 1000).toISOString()}`);

    out.line('3. Verify: POST /v1/verify (Form B, with webhook_url)');
    const exactPayload = {
      authorization: authorizationToJson(authorization),
      signature,
    };
    const legacyChain = network?.legacyName ?? caip2;
    const verified = await api.post<{ verification_id: string; status: string }>('/v1/verify', {
      transaction_hash: authorization.nonce,
      chain: legacyChain,
      seller_address: merchant.address,
      expected_amount: price.toString(),
      expected_token: info.token.address,
      metadata: { source: 'npm run demo', paymentPayload: { x402Version: 1, scheme: 'exact', network: legacyChain, payload: exactPayload } },
      webhook_url: webhookUrl,
    });
    const verificationId = verified.body.verification_id;
    step.line(`${verified.body.status}  ${verificationId}`);

    out.line('4. Settle: POST /v1/settle (Form B); the worker collects the fee, then executes the transfer');
    const started = Date.now();
    const created = await api
      .post<{ settlement_id: string; status: string }>('/v1/settle', { verification_id: verificationId, destination_address: merchant.address })
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 401) {
          throw new CliError(
            flags.settleKey
              ? `the API refused the settle key given with --settle-key (or FACILITATOR_SETTLE_KEY): ${err.apiMessage}`
              : `the merchant has settle protection on: pass its settle key with --settle-key <key> or FACILITATOR_SETTLE_KEY (${err.apiMessage})`,
          );
        }
        throw err;
      });
    const settlementId = created.body.settlement_id;
    step.line(`${created.body.status}  ${settlementId}`);
    const settled = await waitForOutcome(api, settlementId);
    if (settled.status !== 'settled') {
      throw new CliError(`settlement ${settlementId} ${settled.status}: ${settled.error?.code ?? ''} ${settled.error?.message ?? ''}`.trim());
    }
    step.line(`settled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    step.line(table([
      ['fee tx', `${settled.details.fee_tx_hash} (${usdc(BigInt(settled.details.fee_amount))} merchant → treasury, transferFrom)`],
      ['transfer tx', `${settled.details.settlement_tx_hash} (${usdc(price)} payer → merchant, by the payer's authorization)`],
    ]));

    out.line(`5. Webhooks received at ${webhookUrl}, signatures checked`);
    const ours = (type: string) => (d: Delivery) => d.body.verification_id === verificationId && d.body.event_type === type;
    for (const type of ['verification.completed', 'settlement.completed']) {
      const delivery = await listener.waitFor(ours(type), WEBHOOK_TIMEOUT_MS);
      if (!delivery) throw new CliError(`no ${type} webhook within ${WEBHOOK_TIMEOUT_MS / 1000} s (see GET /v1/webhooks/deliveries?verification_id=${verificationId})`);
      const check = verifyWebhookDelivery(delivery.rawBody, delivery.signature, secret);
      if (!check.valid) {
        throw new CliError(`${type} webhook signature is not valid: ${check.reason} (is WEBHOOK_SECRET the merchant's webhook secret?)`);
      }
      step.line(`${type.padEnd(23)} ${String(delivery.body.event_id)}  signature valid (x-webhook-signature ${delivery.signature!.slice(0, 12)}…)`);
    }

    const after = await balances(chain, info);
    printBalances('Balances after', after, before);
    const feeTaken = BigInt(settled.details.fee_amount);
    const expected = { payer: -price, merchant: price - feeTaken, treasury: feeTaken };
    const moved = { payer: after.payer - before.payer, merchant: after.merchant - before.merchant, treasury: after.treasury - before.treasury };
    out.line();
    if (moved.payer === expected.payer && moved.merchant === expected.merchant && moved.treasury === expected.treasury) {
      out.line(`Done: the payer paid ${usdc(price)}; the merchant received ${usdc(price - feeTaken)}, net of the ${usdc(feeTaken)} fee the treasury collected.`);
    } else {
      out.line('Done, but the balances moved by more than this payment: something else used these accounts meanwhile.');
    }
  } finally {
    await listener.stop();
    chain.close();
  }

  function printBalances(title: string, now: Balances, then?: Balances): void {
    const keys = ['payer', 'merchant', 'treasury'] as const;
    const amounts = keys.map((key) => usdc(now[key]));
    const width = Math.max(...amounts.map((a) => a.length));
    const rows = keys.map((key, i): [string, string] => {
      const delta = then ? `  (${formatDelta(now[key] - then[key], decimals, symbol)})` : '';
      const extra = key === 'merchant' ? `  allowance to the treasury ${usdc(now.allowance)}` : '';
      return [key, `${amounts[i].padEnd(width)}${delta}${extra}`.trimEnd()];
    });
    out.line();
    out.line(title);
    out.line(table(rows, '  '));
  }
}

function readDevnet(file: string): DevnetInfo {
  if (!existsSync(file)) throw new CliError(`no devnet description at ${file}: start the stack with "npm run dev" first`);
  try {
    return readDevnetInfo(file);
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${oneLine(err)}`);
  }
}

function parsePrice(text: string, decimals: number): bigint {
  try {
    const units = parseUnits(text.replace(/^\$/, ''), decimals);
    if (units > 0n) return units;
  } catch {
    // reported below
  }
  throw new CliError(`--price must be a positive token amount such as 1.00 (got ${JSON.stringify(text)})`);
}

async function checkReady(api: ApiClient): Promise<void> {
  try {
    await api.get('/readyz');
  } catch (err) {
    if (err instanceof ApiError) throw new CliError(`the API at ${api.baseUrl} is not ready: ${err.apiMessage}`);
    throw new CliError(`${oneLine(err)}: is "npm run dev" running (and --api its URL)?`);
  }
}

async function balances(chain: ChainConnection, info: DevnetInfo): Promise<Balances> {
  const { payer, merchant, treasury } = info.accounts;
  const [p, m, t, a] = await Promise.all([
    chain.usdc.balanceOf(payer.address),
    chain.usdc.balanceOf(merchant.address),
    chain.usdc.balanceOf(treasury.address),
    chain.usdc.allowance(merchant.address, treasury.address),
  ]);
  return { payer: p, merchant: m, treasury: t, allowance: a };
}

async function waitForOutcome(api: ApiClient, id: string): Promise<SettlementRecord> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let lastState = '';
  for (;;) {
    const { body } = await api.get<SettlementRecord>(`/v1/settlements/${id}`);
    if (body.state !== lastState) {
      if (lastState !== '') step.line(`state  ${body.state}`);
      lastState = body.state;
    }
    if (body.status !== 'pending') return body;
    if (Date.now() > deadline) throw new CliError(`settlement ${id} still in state ${body.state} after ${SETTLE_TIMEOUT_MS / 1000} s: see the worker's log (is it running?)`);
    await sleep(100);
  }
}

async function main(argv: string[]): Promise<void> {
  const program = new Command('demo')
    .description('one complete x402 payment against the stack from "npm run dev"')
    .addOption(new Option('--api <url>', 'the API of the dev stack').env('FACILITATOR_API_URL').default(DEFAULT_API_URL))
    .addOption(new Option('--api-key <key>', 'X-API-Key, if the stack sets API_KEYS').env('FACILITATOR_API_KEY'))
    .addOption(new Option('--settle-key <key>', "the merchant's settle key, once it turned settle protection on (npm run cli -- merchant settle-key)").env('FACILITATOR_SETTLE_KEY'))
    .option('--devnet-file <file>', 'the devnet description "npm run dev" writes (in DEV_STACK_DIR when set)', devnetFilePath(process.env))
    .option('--price <amount>', 'what the payer pays, in tokens', '1.00')
    .option('--settlements <n>', 'the allowance the merchant grants, in settlements', '100')
    .showHelpAfterError('(add --help for usage)');
  program.parse(argv);
  try {
    await demo(program.opts<DemoFlags>());
    process.exitCode = 0;
  } catch (err) {
    process.stderr.write(`\ndemo failed: ${oneLine(err)}\n`);
    process.exitCode = 1;
  }
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(process.exitCode);
}

void main(process.argv);

/** The merchant's own webhook secret, fetched as `facilitator merchant webhook-secret` does. */
async function merchantWebhookSecret(api: ApiClient, merchant: Wallet): Promise<string> {
  const { body: published } = await api.get<PublishedMerchantRequestDomain>(MERCHANT_REQUEST_DOMAIN_PATH);
  const proof = await signMerchantRequest(merchant, { action: MerchantAction.GetWebhookSecret, merchant: merchant.address, ...signingTargetOf(published) });
  const { body } = await api.post<{ secret: string }>(`/v1/merchants/${merchant.address}/webhook-secret`, { proof });
  return body.secret;
}
