/**
 * `removed_after_sent`, on a worker thread (the checker is synchronous): over a full copy of a
 * finished `claude-code` root, a removal pass before any push must remove nothing; a push to a
 * receiver of its own on loopback, then a removal pass, must remove the whole session; and a push
 * after that must send nothing. Reports what did not happen that way.
 */
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { workerData, type MessagePort } from 'node:worker_threads';
import { encodeResponse } from '../otlp/codec.js';
import { validateOtlpExporterConfig } from '../exporters/otlp/config.js';
import { Pusher } from '../exporters/otlp/pusher.js';
import { chainDir } from '../storage/chain.js';
import { sessionDir } from '../storage/layout.js';
import { PushState } from '../storage/push-state.js';
import { markerPath, readMarker, SOURCE_DIR, type ScenarioMarker } from '../storage/scenario-marker.js';
import { readSpool } from '../storage/hook-spool.js';
import { retiredSpoolPath } from '../storage/hook-landing.js';
import { LocalCollector } from '../receivers/claude-code-local/pass.js';
import { removeSentScenarioSessions } from '../storage/scenario-removal.js';

export interface RemovalCheckAnswer {
  problems: string[];
  error?: string;
}

interface Data {
  root: string;
  session: string;
  flag: Int32Array;
  port: MessagePort;
}

/** What of the session is still on disk: its landed files, its chain, its marker, the files and shared lines the build wrote, the plugin's observations. */
function leftOf(root: string, session: string, marker: ScenarioMarker): string[] {
  const left: string[] = [];
  if (existsSync(sessionDir(root, session))) left.push('its landed files');
  if (existsSync(chainDir(root, session))) left.push('its chain');
  if (existsSync(markerPath(root, session))) left.push('its marker');
  const sources = marker.files.filter((f) => existsSync(join(root, SOURCE_DIR, f.path)));
  if (sources.length) left.push(`${sources.length} source file(s) the build wrote`);
  for (const shared of marker.shared_lines ?? []) {
    const p = join(root, SOURCE_DIR, shared.path);
    const text = existsSync(p) ? readFileSync(p, 'utf8').split('\n') : [];
    const still = shared.lines.filter((l) => text.includes(l)).length;
    if (still) left.push(`${still} line(s) of ${shared.path} the build wrote`);
  }
  if (readSpool(root, session).length || existsSync(retiredSpoolPath(root, session))) left.push("the plugin's observations");
  return left;
}

/** One collect pass over the root as the build's configuration runs it: after a removal it must land nothing, from any file. */
function collectAfter(root: string): string[] {
  const r = new LocalCollector({
    root,
    sourceRoot: join(root, SOURCE_DIR, 'projects'),
    filter: { include: [], exclude: [] },
    maxDeltaBytes: 2 * 1024 * 1024,
    providerBodies: join(root, SOURCE_DIR, 'asz', 'provider-bodies'),
  }).pass();
  return [
    ...(r.landedRecords ? [`a collect after the removal landed ${r.landedRecords} record(s)`] : []),
    ...r.errors.map((e) => `a collect after the removal: ${e.where}: ${e.message}`),
  ];
}

async function check(root: string, session: string): Promise<string[]> {
  const problems: string[] = [];
  if (!existsSync(markerPath(root, session))) return ['the build wrote no marker for the session'];
  const marker = readMarker(markerPath(root, session));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(encodeResponse('logs', 'protobuf')));
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const cfg = validateOtlpExporterConfig({ protocol: 'http', endpoint, instance_id: 'scenario-removal' }, 'scenario');
  const pusher = new Pusher({ root, cfg, logs: true, metrics: undefined });
  try {
    const state = new PushState(root);
    const before = removeSentScenarioSessions({ root, state, endpoint: pusher.endpoint, nowMs: Date.now(), waitForMetrics: false });
    if (before.removed.length) problems.push(`removed before any push: ${before.removed.join(', ')}`);
    const sent = await pusher.pass({ force: true });
    if (sent.pending !== 0 || sent.problems.length) problems.push(`the push left ${sent.pending} file(s) unsent: ${sent.problems.join('; ')}`);
    const after = removeSentScenarioSessions({ root, state, endpoint: pusher.endpoint, nowMs: Date.now(), waitForMetrics: false });
    for (const k of after.kept) problems.push(`kept after a clean push: ${k.session}: ${k.reason}`);
    if (after.held) problems.push(`every marked session kept after a clean push: ${after.held}`);
    const left = leftOf(root, session, marker);
    if (left.length) problems.push(`after a clean push the session still has ${left.join(', ')}`);
    problems.push(...collectAfter(root));
    const again = await pusher.pass({ force: true });
    if (again.logs.files !== 0) problems.push(`a push after the removal sent ${again.logs.files} file(s) again`);
  } finally {
    pusher.close();
    server.closeAllConnections();
    await new Promise<void>((res) => server.close(() => res()));
  }
  return problems;
}

const d = workerData as Data | undefined;
if (d) {
  const answer: RemovalCheckAnswer = { problems: [] };
  try {
    answer.problems = await check(d.root, d.session);
  } catch (err) {
    answer.error = (err as Error).stack ?? String(err);
  }
  d.port.postMessage(answer);
  Atomics.store(d.flag, 0, 1);
  Atomics.notify(d.flag, 0);
}
