#!/usr/bin/env node
// The CLI entry point. The TypeScript is compiled by `npm ci` (the `prepare` script).
// `aszcol hook` runs inside the agent's tool calls under a hard time budget, and `aszcol usage` over a
// landed root, `aszcol parse` and `aszcol collect --once` with nothing new are mostly start-up
// otherwise: each loads its own modules only, never the whole CLI.
const argv = process.argv.slice(2);
const hook = argv[0] === 'hook';
const run = hook
  ? (await import('../dist/src/cli/hook.js')).hookMain.bind(undefined, argv.slice(1))
  : argv[0] === 'usage'
    ? (await import('../dist/src/cli/usage-main.js')).usageMain.bind(undefined, argv)
    : argv[0] === 'parse'
      ? (await import('../dist/src/cli/parse-main.js')).parseMain.bind(undefined, argv)
      : argv[0] === 'collect'
        ? (await import('../dist/src/cli/collect-main.js')).collectMain.bind(undefined, argv)
        : (await import('../dist/src/cli/main.js')).main.bind(undefined, argv);

// A reader that stops early (`aszcol sources | head`) is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => { if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0); else throw err; });
}
run().then((code) => { process.exitCode = code; }, (err) => {
  process.stderr.write(`aszcol: ${err && err.stack ? err.stack : err}\n`);
  // A hook's failure must not stop the agent's tool (exit 2 from PreToolUse would).
  process.exitCode = hook ? 0 : 1;
});
