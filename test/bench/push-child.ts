/**
 * One side of the push benchmark, in a process of its own so its peak memory is its own:
 * `aszcol <root> <endpoint>` pushes the root with the otlp exporter's Pusher; `bare <root> <endpoint>`
 * is a bare @grpc/grpc-js client sending the same files' bytes, read from disk, in requests of the
 * same budget, with nothing else done; `aszcol-hide` pushes with every withholding category on.
 * Prints one JSON line.
 */
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { listLanded } from '../../src/storage/landed-files.js';
import { listConversations, listRounds } from '../../src/storage/chain.js';
import { isSessionEntryName } from '../../src/storage/layout.js';
import { readdirSync } from 'node:fs';
import { validateOtlpExporterConfig } from '../../src/exporters/otlp/config.js';
import { Pusher } from '../../src/exporters/otlp/pusher.js';
import { GRPC_SERVICE } from '../../src/otlp/proto.js';

const [mode, root, endpoint, batch] = process.argv.slice(2) as [string, string, string, string];
const batchBytes = Number(batch);

function files(): string[] {
  const out: string[] = [];
  for (const s of readdirSync(root).filter(isSessionEntryName).sort()) for (const f of listLanded(root, s)) out.push(f.path);
  for (const c of listConversations(root)) for (const r of listRounds(root, c)) out.push(r.path);
  return out;
}

async function bare(): Promise<{ bytes: number; requests: number }> {
  const client = new grpc.Client(endpoint, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': -1 });
  const id = (b: Buffer) => b;
  const send = (body: Buffer) =>
    new Promise<void>((res, rej) => {
      client.makeUnaryRequest(`/${GRPC_SERVICE.logs}/Export`, id, id, body, new grpc.Metadata(), { deadline: Date.now() + 60_000 }, (e) =>
        e ? rej(e) : res(),
      );
    });
  let bytes = 0,
    requests = 0;
  let batchParts: Buffer[] = [];
  let size = 0;
  for (const p of files()) {
    const b = readFileSync(p);
    if (size > 0 && size + b.length > batchBytes) {
      await send(Buffer.concat(batchParts));
      requests++;
      batchParts = [];
      size = 0;
    }
    batchParts.push(b);
    size += b.length;
    bytes += b.length;
  }
  if (size) {
    await send(Buffer.concat(batchParts));
    requests++;
  }
  client.close();
  return { bytes, requests };
}

/** `aszcol-hide` withholds every category: each record line that holds text or data is read and checked on the way. */
async function aszcol(hide: boolean): Promise<{ bytes: number; requests: number; wire: number }> {
  const all = ['user_prompts', 'tool_inputs', 'tool_outputs', 'api_bodies', 'system_prompt', 'tool_schemas'];
  const cfg = validateOtlpExporterConfig({ endpoint, batch_bytes: batchBytes, instance_id: 'bench', ...(hide ? { hide: all } : {}) }, 'bench');
  const p = new Pusher({ root, cfg, logs: true, metrics: undefined });
  const r = await p.pass({ force: true });
  p.close();
  if (r.problems.length || r.pending) throw new Error(`push did not finish: ${r.problems.join('; ')} (pending ${r.pending})`);
  return { bytes: r.logs.bytes, requests: r.logs.requests, wire: r.wireBytes };
}

const t0 = process.hrtime.bigint();
const cpu0 = process.cpuUsage();
const result = mode === 'bare' ? await bare() : await aszcol(mode === 'aszcol-hide');
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
// Every thread of the process (the reader's too): what a loaded machine does not distort as much as wall time.
const cpu = process.cpuUsage(cpu0);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
process.stdout.write(JSON.stringify({ mode, ...result, seconds, cpuSeconds, maxRssMb: process.resourceUsage().maxRSS / 1024 }) + '\n');
