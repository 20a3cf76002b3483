/**
 * The service on a whole history: one line appended to one transcript, timed until the page's
 * API serves it. The root was collected and parsed before, so every pass but the one that takes
 * the line has nothing new, the way a long-running service on a laptop spends its day.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startService } from '../helpers/service.js';

const TRIALS = 5;
/** Each poll of the API is this far apart: the measured latency is at most this much late. */
const POLL_MS = 20;
const GIVE_UP_MS = 30_000;

/** A main transcript (not a subagent's) per project directory, with its session id. */
function mainTranscripts(projects: string): { path: string; session: string }[] {
  const out: { path: string; session: string }[] = [];
  for (const p of readdirSync(projects).sort()) {
    const name = readdirSync(join(projects, p)).find((n) => n.endsWith('.jsonl'));
    if (name) out.push({ path: join(projects, p, name), session: name.slice(0, -'.jsonl'.length) });
  }
  return out;
}

/** A user prompt as Claude Code writes one: the transcript's last typed prompt as the template, continuing its last record. */
function promptLine(path: string, marker: string): string {
  const records = readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const last = records.filter((r) => typeof r.uuid === 'string').pop()!;
  const template = records.filter((r) => r.type === 'user' && typeof (r.message as { content?: unknown } | undefined)?.content === 'string').pop() ?? last;
  const rec = {
    ...template,
    parentUuid: last.uuid,
    promptId: randomUUID(),
    message: { role: 'user', content: marker },
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
  };
  return JSON.stringify(rec) + '\n';
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? +((Number(m[1]) * 1024) / 1e6).toFixed(1) : NaN;
  } catch {
    return NaN;
  }
}

export async function serviceLatency(o: {
  config: string;
  projects: string;
  root: string;
  bin: string;
  appendLine: (path: string, line: string) => void;
}): Promise<Record<string, unknown>> {
  const svc = startService(['--config', o.config], { killAfterMs: 600_000 });
  try {
    const addresses = await svc.addresses();
    const view = Object.entries(addresses).find(([k]) => k.includes('view'))?.[1] ?? Object.values(addresses)[0];
    const url = `http://${view}`;
    const targets = mainTranscripts(o.projects);
    // Ready: the first pass over the whole root is done once the API serves a conversation.
    const ready0 = performance.now();
    for (;;) {
      const r = await fetch(`${url}/api/c/${targets[0]!.session}/view`).catch(() => undefined);
      if (r?.ok) break;
      if (performance.now() - ready0 > GIVE_UP_MS * 4) throw new Error(`the service never served ${targets[0]!.session}`);
      await sleep(100);
    }
    const readyMs = performance.now() - ready0;
    const latencies: number[] = [];
    for (let i = 0; i < TRIALS; i++) {
      const t = targets[(i * 7) % targets.length]!;
      const marker = `bench-history-marker-${i}-${randomUUID()}`;
      await fetch(`${url}/api/c/${t.session}/view`); // the document is current before the line
      const line = promptLine(t.path, marker);
      const t0 = performance.now();
      o.appendLine(t.path, line);
      for (;;) {
        const body = await (await fetch(`${url}/api/c/${t.session}/view`)).text();
        if (body.includes(marker)) break;
        if (performance.now() - t0 > GIVE_UP_MS) throw new Error(`the appended line never reached the page for ${t.session}`);
        await sleep(POLL_MS);
      }
      latencies.push(performance.now() - t0);
      await sleep(300 + i * 150); // the next line lands at another point of the interval
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      interval_ms: 1000,
      ready_s: +(readyMs / 1000).toFixed(2),
      line_to_page_ms: latencies.map((l) => Math.round(l)),
      median_ms: Math.round(sorted[Math.floor(sorted.length / 2)]!),
      max_ms: Math.round(sorted[sorted.length - 1]!),
      peak_rss_mb: peakRssMb(svc.child.pid!),
      poll_ms: POLL_MS,
      target: '<= interval + 200 ms',
    };
  } finally {
    svc.child.kill('SIGTERM');
    await svc.exited;
  }
}
