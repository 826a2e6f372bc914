import { Command, Option } from 'commander';
import { DEFAULT_API_URL } from './api-client';
import { DEFAULT_NETWORK } from './chain-context';
import { applyDevStackDefaults } from './dev-stack-defaults';
import { allowanceCommand } from './commands/allowance';
import { approveCommand } from './commands/approve';
import { printAuthorizationCommand, signAuthorizationCommand, submitAuthorizationCommand } from './commands/executor-authorization';
import { executorSetupCommand } from './commands/executor-setup';
import { executorStatusCommand } from './commands/executor-status';
import { minimumCommand, settleKeyCommand, webhookSecretCommand } from './commands/merchant';
import { statusCommand } from './commands/status';
import { verifyWebhookCommand } from './commands/verify-webhook';
import { oneLine } from './errors';
import { stdoutOutput, type Output } from './output';

const ENVIRONMENT_HELP = `
Chain settings come from the same variables as the service: RPC_URL_<chainId> (else the network's
public RPC), TOKEN_ADDRESS_<chainId> (else Circle's USDC), CONFIRMATIONS_<chainId>, FEE_AMOUNT (10000).
The treasury: --treasury, TREASURY_ADDRESS, or the address of TREASURY_PRIVATE_KEY.
The merchant's key: MERCHANT_PRIVATE_KEY, or --keystore/MERCHANT_KEYSTORE (password from
MERCHANT_KEYSTORE_PASSWORD or a prompt). The API: --api/FACILITATOR_API_URL, --api-key/FACILITATOR_API_KEY.
While \`npm run dev\` runs and none of these is set, its devnet file (.devnet/devnet.json, or in DEV_STACK_DIR)
gives RPC_URL_<chainId>, TOKEN_ADDRESS_<chainId>, TREASURY_ADDRESS and MERCHANT_PRIVATE_KEY, for its chain only.
The operator's executor commands read the worker's variables: TREASURY_PRIVATE_KEY (or TREASURY_ADDRESS, for
status only), RELAYER_PRIVATE_KEYS or RELAYER_ADDRESSES (neither: the treasury is the only relayer), FEE_AMOUNT.`;

/** Runs a command and turns any failure into one line on stderr and exit code 1. */
function action<A extends unknown[]>(run: (out: Output, ...args: A) => Promise<number>) {
  return async (...args: A) => {
    try {
      process.exitCode = await run(stdoutOutput(), ...args);
    } catch (err) {
      process.stderr.write(`error: ${oneLine(err)}\n`);
      if (process.env.FACILITATOR_CLI_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
      process.exitCode = 1;
    }
  };
}

function networkOptions(command: Command): Command {
  return command
    .option('--network <network>', 'CAIP-2 id or short name (base-sepolia, base, layer2, ...)', DEFAULT_NETWORK)
    .option('--rpc-url <url>', 'JSON-RPC endpoint (default: RPC_URL_<chainId>, else the public one)');
}

function chainOptions(command: Command): Command {
  return networkOptions(command).option('--treasury <address>', "the facilitator's treasury (default: TREASURY_ADDRESS)");
}

export function buildProgram(): Command {
  const program = new Command('facilitator')
    .description("Merchant tool for the x402 facilitator: the fee allowance, webhook signatures, status records; and the operator's executor set-up")
    .version('0.1.0')
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', ENVIRONMENT_HELP);

  chainOptions(program.command('allowance'))
    .description("the merchant's allowance to the treasury, its token balance, and how many settlements they pay the fee for")
    .option('--merchant <address>', 'the merchant (default: the address of MERCHANT_PRIVATE_KEY)')
    .option('--json', 'one JSON object (amounts in smallest units)')
    .action(action((out, flags) => allowanceCommand(flags, out)));

  chainOptions(program.command('approve'))
    .description('set the allowance the treasury may take fees from, signed with the merchant key; waits until confirmed')
    .option('--settlements <n>', 'allow n settlements: n × FEE_AMOUNT')
    .option('--amount <units>', "allow this many of the token's smallest units (1 USDC = 1000000; 0 revokes)")
    .option('--keystore <file>', 'sign with an encrypted JSON keystore instead of MERCHANT_PRIVATE_KEY')
    .option('--confirmations <n>', 'confirmations to wait for (default: CONFIRMATIONS_<chainId>, else 1)')
    .option('--timeout <seconds>', 'how long to wait for confirmation', '180')
    .action(action((out, flags) => approveCommand(flags, out)));

  program
    .command('verify-webhook')
    .description("check a webhook delivery's signature; the raw body on standard input. Exit 0 \"valid\", or 1 and why not")
    .option('--secret-file <file>', "a file holding the merchant's webhook secret (whsec_…); else WEBHOOK_SECRET")
    .addOption(new Option('--secret <secret>', 'the webhook secret on the command line (prefer --secret-file: flags end up in shell history)'))
    .option('--signature <hex>', 'the x-webhook-signature header')
    .option('--webhook-id <id>', 'the webhook-id header (Standard Webhooks)')
    .option('--webhook-timestamp <seconds>', 'the webhook-timestamp header (Standard Webhooks; refused when over 5 minutes off)')
    .option('--webhook-signature <v1,…>', 'the webhook-signature header (Standard Webhooks)')
    .action(action((out, flags) => verifyWebhookCommand(flags, out)));

  const merchant = program.command('merchant').description('your merchant settings, each request signed with your payTo key (MERCHANT_PRIVATE_KEY or --keystore)');
  const merchantOptions = (command: Command) =>
    command
      .addOption(new Option('--api <url>', 'the facilitator API').env('FACILITATOR_API_URL').default(DEFAULT_API_URL))
      .option('--network <network>', "the chain you expect the signature to name: the API fixes it (a contract wallet is asked there); refused when the API's differs")
      .option('--keystore <file>', 'sign with an encrypted JSON keystore instead of MERCHANT_PRIVATE_KEY')
      .option('--json', 'one JSON object');
  merchantOptions(merchant.command('webhook-secret'))
    .description('print your webhook secret (created on first use); --rotate makes a new one, the old one signing beside it for 24 h (--grace-seconds 0: not at all)')
    .option('--rotate', 'rotate the secret')
    .option('--grace-seconds <seconds>', 'with --rotate: how long the old secret keeps signing (0 retires it at once, e.g. after a leak; at most the service grace)')
    .action(action((out, flags) => webhookSecretCommand(flags, out)));
  merchantOptions(merchant.command('settle-key'))
    .description('turn settle protection on: print the key settles of payments to you must carry (shown once); --revoke turns it off')
    .option('--revoke', 'turn settle protection off (your minimum returns to the default)')
    .action(action((out, flags) => settleKeyCommand(flags, out)));
  merchantOptions(merchant.command('minimum'))
    .description('set your own minimum payment in token units (below the fee only with settle protection on)')
    .argument('<units>', "the token's smallest units (1 USDC = 1000000)")
    .action(action((out, units: string, flags) => minimumCommand(units, flags, out)));

  // the operator's commands: the treasury's delegation (EIP-7702) to the settlement executor, which atomic settlements need
  const executor = program.command('executor').description("operator: the settlement executor the treasury delegates to (EIP-7702), which atomic settlements need");
  networkOptions(executor.command('status'))
    .description('whether the treasury delegates to an executor holding this configuration. Exit 0 ready, 2 not set up, 1 on errors')
    .option('--json', 'one JSON object')
    .action(action((out, flags) => executorStatusCommand(flags, out)));
  networkOptions(executor.command('setup'))
    .description('deploy the executor and delegate the treasury to it (TREASURY_PRIVATE_KEY signs, the first relayer key pays); nothing is sent when already set up')
    .option('--timeout <seconds>', 'how long the whole set-up may take', '300')
    .option('--print-authorization', 'no treasury key here: deploy the executor (the first relayer pays) and print what the treasury must sign')
    .option('--executor <address>', 'with --print-authorization: an executor an earlier run deployed (nothing is deployed)')
    .option('--out <file>', 'with --print-authorization: also write the request to this file')
    .action(action((out, flags) => (flags.printAuthorization ? printAuthorizationCommand(flags, out) : executorSetupCommand(flags, out))));
  executor
    .command('sign-authorization')
    .description("offline, where TREASURY_PRIVATE_KEY is: sign a request printed by `executor setup --print-authorization` (its digest is checked first)")
    .requiredOption('--request <file>', 'the printed request (JSON)')
    .option('--out <file>', 'also write the signed authorization to this file')
    .option('--executor <address>', 'the executor address you checked yourself; the request must name it')
    .option('--rpc-url <url>', "check the executor on chain (read only) against this machine's settings instead")
    .action(action((out, flags) => signAuthorizationCommand(flags, out)));
  networkOptions(executor.command('submit-authorization'))
    .description("send the treasury's signed authorization from the first relayer key (type-4 transaction); checks signer, nonce and executor first")
    .requiredOption('--authorization <file>', 'the signed authorization (JSON, from sign-authorization)')
    .action(action((out, flags) => submitAuthorizationCommand(flags, out)));

  program
    .command('status')
    .description('a verification (ver_…) or settlement (stl_…) record from the API')
    .argument('<id>', 'verification or settlement id')
    .addOption(new Option('--api <url>', 'the facilitator API').env('FACILITATOR_API_URL').default(DEFAULT_API_URL))
    .addOption(new Option('--api-key <key>', 'X-API-Key, when the API requires one').env('FACILITATOR_API_KEY'))
    .addOption(new Option('--settle-key <key>', "a merchant's settle key, which reads its own records").env('FACILITATOR_SETTLE_KEY'))
    .option('--json', 'the record as the API returns it')
    .action(action((out, id: string, flags) => statusCommand(id, flags, out)));

  return program;
}

/** Parses, runs, and exits once the output is flushed (a provider or socket left open never holds the process). */
export async function run(argv: string[]): Promise<void> {
  try {
    const dev = applyDevStackDefaults(process.env);
    if (dev) process.stderr.write(`using the running dev stack's ${dev.file} for ${dev.filled.join(', ')}\n`);
    await buildProgram().parseAsync(argv);
  } catch (err) {
    process.stderr.write(`error: ${oneLine(err)}\n`);
    process.exitCode = 1;
  }
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(process.exitCode ?? 0);
}
