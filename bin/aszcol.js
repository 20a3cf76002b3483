#!/usr/bin/env node
// The CLI entry point. The TypeScript is compiled by `npm ci` (the `prepare` script).
// `aszcol hook` runs inside the agent's tool calls under a hard time budget: it loads its own
// module only, never the whole CLI.
const hook = process.argv[2] === 'hook';
const { main } = hook ? { main: undefined } : await import('../dist/src/cli/main.js');

// A reader that stops early (`aszcol sources | head`) is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => { if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0); else throw err; });
}
(hook ? import('../dist/src/cli/hook.js').then((m) => m.hookMain(process.argv.slice(3))) : main(process.argv.slice(2))).then((code) => { process.exitCode = code; }, (err) => {
  process.stderr.write(`aszcol: ${err && err.stack ? err.stack : err}\n`);
  // A hook's failure must not stop the agent's tool (exit 2 from PreToolUse would).
  process.exitCode = hook ? 0 : 1;
});
