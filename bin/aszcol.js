#!/usr/bin/env node
// The CLI entry point. The TypeScript is compiled by `npm ci` (the `prepare` script).
import { main } from '../dist/src/cli/main.js';
main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err) => {
  process.stderr.write(`aszcol: ${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
});
