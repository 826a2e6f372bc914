import { AbiCoder, dataSlice, isHexString } from 'ethers';

interface DecodedRevert {
  /** "ERC20: transfer amount exceeds balance", "panic 0x11", ...; "execution reverted" when the contract gave nothing */
  reason: string;
  /** the raw revert data, when the node returned some */
  data?: string;
}

const ERROR_STRING_SELECTOR = '0x08c379a0';
const PANIC_SELECTOR = '0x4e487b71';
const GENERIC = 'execution reverted';

/**
 * The revert reason of a failed `eth_call`/`eth_estimateGas`, from the revert data when the node returned
 * it (Error(string), Panic(uint256), or a custom error's selector), else from the node's message
 * ("execution reverted: <reason>"), which is all some nodes give.
 */
export function decodeRevert(error: unknown): DecodedRevert {
  const data = revertDataOf(error);
  if (data !== undefined) {
    const fromData = decodeRevertData(data);
    if (fromData !== undefined) return { reason: fromData, data };
  }
  const fromMessage = reasonFromMessage(error);
  return data === undefined ? { reason: fromMessage } : { reason: fromMessage, data };
}

/** The reason of a reverted call (as decodeRevert reads it), or undefined when the error is not a revert (e.g. the node is down). */
export function revertReasonOf(error: unknown): string | undefined {
  return (error as { code?: unknown } | null)?.code === 'CALL_EXCEPTION' ? decodeRevert(error).reason : undefined;
}

export function decodeRevertData(data: string): string | undefined {
  if (!isHexString(data) || data.length < 10) return undefined;
  const selector = dataSlice(data, 0, 4).toLowerCase();
  try {
    if (selector === ERROR_STRING_SELECTOR) return AbiCoder.defaultAbiCoder().decode(['string'], dataSlice(data, 4))[0] as string;
    if (selector === PANIC_SELECTOR) {
      const code = AbiCoder.defaultAbiCoder().decode(['uint256'], dataSlice(data, 4))[0] as bigint;
      return `panic 0x${code.toString(16)}`;
    }
  } catch {
    return undefined; // malformed payload: fall back to the node's message
  }
  return `custom error ${selector}`;
}

interface RevertLike {
  data?: unknown;
  reason?: unknown;
  info?: { error?: { data?: unknown; message?: unknown } };
  error?: { data?: unknown; message?: unknown };
  shortMessage?: unknown;
}

function revertDataOf(error: unknown): string | undefined {
  const e = (error ?? {}) as RevertLike;
  for (const candidate of [e.data, e.info?.error?.data, e.error?.data]) {
    if (typeof candidate === 'string' && isHexString(candidate) && candidate.length > 2) return candidate;
  }
  return undefined;
}

function reasonFromMessage(error: unknown): string {
  const e = (error ?? {}) as RevertLike;
  if (typeof e.reason === 'string' && e.reason) return e.reason;
  for (const message of [e.info?.error?.message, e.error?.message, e.shortMessage]) {
    if (typeof message !== 'string') continue;
    const match = /execution reverted:?\s*(.+)$/i.exec(message);
    if (match && match[1].trim()) return match[1].trim().replace(/^"(.*)"$/, '$1');
  }
  return GENERIC;
}
