import { Wallet } from 'ethers';
import { EnvReader } from '@facilitator/config';
import { connectChain, resolveChainSettings, resolveTreasury, settlementsCovered, type ChainFlags } from '../chain-context';
import { CliError } from '../errors';
import { formatToken, parseAddress, redactUrl, table } from '../format';
import type { Output } from '../output';

export interface AllowanceFlags extends ChainFlags {
  merchant?: string;
  json?: boolean;
}

/** `facilitator allowance`: the merchant's allowance to the treasury, its balance, and the settlements they pay for. */
export async function allowanceCommand(flags: AllowanceFlags, out: Output): Promise<number> {
  const settings = resolveChainSettings(flags);
  const treasury = resolveTreasury(flags.treasury);
  const merchant = resolveMerchantAddress(flags.merchant);
  const chain = await connectChain(settings);
  try {
    const [allowance, balance] = await Promise.all([chain.usdc.allowance(merchant, treasury), chain.usdc.balanceOf(merchant)]);
    const fee = settings.feeAmount;
    const cover = settlementsCovered(allowance, balance, fee);
    if (flags.json) {
      out.line(
        JSON.stringify({
          network: settings.network.caip2,
          token: chain.token.address,
          merchant,
          treasury,
          allowance: allowance.toString(),
          balance: balance.toString(),
          fee: fee.toString(),
          settlements_covered: cover.covered.toString(),
          settlements_by_allowance: cover.byAllowance.toString(),
          settlements_by_balance: cover.byBalance.toString(),
        }),
      );
      return 0;
    }
    const { decimals, symbol } = chain.token;
    const amount = (units: bigint) => `${formatToken(units, decimals, symbol)} (${units} units)`;
    const limit = cover.byAllowance <= cover.byBalance ? 'the allowance' : 'the balance';
    out.line(
      table([
        ['network', `${settings.network.caip2} (${settings.network.label}) via ${redactUrl(settings.rpcUrl)}`],
        ['token', `${chain.token.address} (${symbol})`],
        ['merchant', merchant],
        ['treasury', treasury],
        ['allowance', amount(allowance)],
        ['balance', amount(balance)],
        ['fee', `${amount(fee)} per settlement`],
        ['covers', `${cover.covered} settlement${cover.covered === 1n ? '' : 's'} (limited by ${limit}: allowance ${cover.byAllowance}, balance ${cover.byBalance})`],
      ]),
    );
    if (cover.byAllowance === 0n) {
      out.line();
      out.line(`The allowance is below one fee: settlements fail with insufficient_allowance. Grant it with:`);
      out.line(`  facilitator approve --network ${settings.network.caip2} --settlements 100`);
    } else if (cover.byBalance === 0n) {
      out.line();
      out.line(`The balance is below one fee: settlements fail with fee_collection_failed until the merchant holds ${symbol}.`);
    }
    return 0;
  } finally {
    chain.close();
  }
}

/** `--merchant`, else the address of MERCHANT_PRIVATE_KEY (the account `approve` signs with). */
function resolveMerchantAddress(flag: string | undefined): string {
  if (flag !== undefined) return parseAddress('--merchant', flag);
  const reader = new EnvReader(process.env);
  const key = reader.raw('MERCHANT_PRIVATE_KEY');
  if (key === undefined) throw new CliError('pass --merchant <address> (or set MERCHANT_PRIVATE_KEY to use its address)');
  return new Wallet(reader.privateKey('MERCHANT_PRIVATE_KEY', key).privateKey).address;
}
