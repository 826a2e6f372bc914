import { connectChain, resolveChainSettings, resolveTreasury, settlementsCovered, type ChainFlags } from '../chain-context';
import { CliError } from '../errors';
import { formatToken, parseWholeNumber, redactUrl, table, UINT256_MAX } from '../format';
import { loadMerchantKey } from '../merchant-signer';
import { approveProgressPrinter, type Output } from '../output';
import { sendApprove } from '../send-approve';

export interface ApproveFlags extends ChainFlags {
  settlements?: string;
  amount?: string;
  keystore?: string;
  confirmations?: string;
  timeout?: string;
}

/** `facilitator approve`: sets the merchant's allowance to the treasury, signed with the merchant's own key. */
export async function approveCommand(flags: ApproveFlags, out: Output): Promise<number> {
  // everything that can be checked offline first, so a typo fails at once
  const settings = resolveChainSettings(flags);
  const treasury = resolveTreasury(flags.treasury);
  const target = targetAllowance(flags, settings.feeAmount);
  const confirmations =
    flags.confirmations !== undefined ? Number(parseWholeNumber('--confirmations', flags.confirmations, 1n, 100n)) : settings.confirmations;
  const timeoutMs = flags.timeout !== undefined ? Number(parseWholeNumber('--timeout', flags.timeout, 1n, 3600n)) * 1000 : 180_000;
  const { wallet, source } = await loadMerchantKey(flags.keystore);

  const chain = await connectChain(settings);
  try {
    const { decimals, symbol } = chain.token;
    const amount = (units: bigint) => (units === UINT256_MAX ? 'unlimited' : `${formatToken(units, decimals, symbol)} (${units} units)`);
    const merchant = wallet.address;
    const [current, balance, eth] = await Promise.all([
      chain.usdc.allowance(merchant, treasury),
      chain.usdc.balanceOf(merchant),
      chain.provider.getBalance(merchant),
    ]);
    out.line(
      table([
        ['network', `${settings.network.caip2} (${settings.network.label}) via ${redactUrl(settings.rpcUrl)}`],
        ['token', `${chain.token.address} (${symbol})`],
        ['merchant', `${merchant} (key from ${source})`],
        ['treasury', treasury],
        ['allowance', `${amount(current)} now → ${amount(target)}${flags.settlements !== undefined ? ` = ${flags.settlements.trim()} × ${formatToken(settings.feeAmount, decimals, symbol)} fee` : ''}`],
      ]),
    );
    if (current === target) {
      out.line(`the allowance is already ${amount(target)}: nothing to send`);
      return 0;
    }
    if (eth === 0n) {
      throw new CliError(`the merchant ${merchant} has no ETH on ${settings.network.label} to pay the approve's gas`);
    }

    const receipt = await sendApprove({
      wallet,
      provider: chain.provider,
      token: chain.token.address,
      spender: treasury,
      amount: target,
      confirmations,
      timeoutMs,
      onProgress: approveProgressPrinter(out),
    });
    const after = await chain.usdc.allowance(merchant, treasury);
    const cover = settlementsCovered(after, balance, settings.feeAmount);
    out.line(`allowance  ${amount(after)}: covers ${cover.byAllowance} settlement${cover.byAllowance === 1n ? '' : 's'} (gas used ${receipt.gasUsed})`);
    if (cover.byBalance < cover.byAllowance) {
      out.line(`note: the merchant's balance, ${formatToken(balance, decimals, symbol)}, pays the fee of only ${cover.byBalance} settlement${cover.byBalance === 1n ? '' : 's'}`);
    }
    return 0;
  } finally {
    chain.close();
  }
}

/** `--settlements n` (n × fee) or `--amount units`, exactly one. */
function targetAllowance(flags: ApproveFlags, fee: bigint): bigint {
  if (flags.settlements !== undefined && flags.amount !== undefined) throw new CliError('pass either --settlements or --amount, not both');
  if (flags.settlements !== undefined) return parseWholeNumber('--settlements', flags.settlements, 1n, UINT256_MAX / fee) * fee;
  if (flags.amount !== undefined) {
    if (/^[0-9]*\.[0-9]*$/.test(flags.amount.trim())) {
      throw new CliError('--amount is in the token\'s smallest units, a whole number (1 USDC = 1000000); or use --settlements');
    }
    return parseWholeNumber('--amount', flags.amount, 0n, UINT256_MAX);
  }
  throw new CliError('pass --settlements <n> (n times the fee) or --amount <units>');
}
