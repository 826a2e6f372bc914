// A compile check (solc-js): in the int tier, not the unit tier, which a developer runs after every change.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERC6492_CHECK_BYTECODE } from './erc6492-check-bytecode';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc') as { compile(input: string): string };

it('the committed creation code is what Erc6492Check.sol compiles to', () => {
  const file = 'Erc6492Check.sol';
  const content = readFileSync(path.join(__dirname, '../../contracts', file), 'utf8');
  const input = {
    language: 'Solidity',
    sources: { [file]: { content } },
    settings: { evmVersion: 'cancun', optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as { contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>> };
  expect(ERC6492_CHECK_BYTECODE).toBe('0x' + output.contracts[file].Erc6492Check.evm.bytecode.object);
});
