import type { ApproveProgress } from './send-approve';

/** Where commands write their answer; a parameter so the demo can indent and tests can capture. */
export interface Output {
  line(text?: string): void;
  /** a status line that a terminal rewrites in place; other outputs only get its changes */
  status(text: string): void;
}

export function stdoutOutput(indent = ''): Output {
  const stream = process.stdout;
  let statusShown = false;
  let lastStatus = '';
  const clearStatus = () => {
    if (statusShown) stream.write('\r\x1b[2K');
    statusShown = false;
  };
  return {
    line(text = '') {
      clearStatus();
      stream.write(`${text.split('\n').map((l) => (l === '' ? '' : indent + l)).join('\n')}\n`);
    },
    status(text) {
      if (stream.isTTY) {
        stream.write(`\r\x1b[2K${indent}${text}`);
        statusShown = true;
      } else if (text.replace(/[0-9]+ s$/, '') !== lastStatus) {
        stream.write(`${indent}${text}\n`);
      }
      lastStatus = text.replace(/[0-9]+ s$/, '');
    },
  };
}

/** Prints an approve's stages: submitted, waiting (a terminal sees the seconds), mined, confirmations. */
export function approveProgressPrinter(out: Output): (event: ApproveProgress) => void {
  return (event) => {
    switch (event.kind) {
      case 'submitted':
        out.line(`submitted  ${event.hash} (nonce ${event.nonce})`);
        break;
      case 'waiting':
        out.status(`waiting for it to be mined… ${Math.floor(event.elapsedMs / 1000)} s`);
        break;
      case 'mined':
        out.line(
          event.confirmations >= event.required
            ? `confirmed  block ${event.blockNumber} (${event.confirmations}/${event.required} confirmation${event.required === 1 ? '' : 's'})`
            : `mined      block ${event.blockNumber}, ${event.confirmations}/${event.required} confirmations`,
        );
        break;
    }
  };
}
