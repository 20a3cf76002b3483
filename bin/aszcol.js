#!/usr/bin/env node
// The CLI entry point. The TypeScript is compiled by `npm ci` (the `prepare` script).
// `aszcol usage` loads only its own modules: a report over a landed root is mostly start-up otherwise.
const argv = process.argv.slice(2);
const main = argv[0] === 'usage' ? (await import('../dist/src/cli/usage-main.js')).usageMain : (await import('../dist/src/cli/main.js')).main;

// A reader that stops early (`aszcol sources | head`) is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => { if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0); else throw err; });
}
main(argv).then((code) => { process.exitCode = code; }, (err) => {
  process.stderr.write(`aszcol: ${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
});
