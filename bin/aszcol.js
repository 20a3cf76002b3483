#!/usr/bin/env node
// The CLI entry point. The TypeScript is compiled by `npm ci` (the `prepare` script).
import { main } from '../dist/src/cli/main.js';

// A reader that stops early (`aszcol sources | head`) is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => { if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0); else throw err; });
}
main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err) => {
  process.stderr.write(`aszcol: ${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
});
