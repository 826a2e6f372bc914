// Loaded with `node --require` (through NODE_OPTIONS) to make a process see node_modules as the runtime
// Docker image has it: a package that package-lock.json marks "dev" (what `npm prune --omit=dev` removes)
// cannot be resolved, as if absent. When the process exits it writes every file it loaded, and every dev
// package it asked for, to $LOADED_MODULES_DIR/<pid>.json.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

const dir = process.env.LOADED_MODULES_DIR;
const root = path.resolve(__dirname, '../..');
if (dir) {
  const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const devOnly = new Set(Object.entries(lock.packages).filter(([, p]) => p.dev).map(([key]) => key));
  const refused = new Set();
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    const file = resolve.call(this, request, ...rest);
    const relative = path.relative(root, file);
    const owner = /^((?:.*\/)?node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(relative)?.[1];
    if (owner && devOnly.has(owner)) {
      refused.add(owner);
      const err = new Error(`Cannot find module '${request}' (${owner} is a dev dependency: not in the runtime image)`);
      err.code = 'MODULE_NOT_FOUND';
      throw err;
    }
    return file;
  };
  process.on('exit', () => {
    const record = { argv: process.argv.slice(1), loaded: Object.keys(require.cache), refused: [...refused] };
    fs.writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(record));
  });
}
