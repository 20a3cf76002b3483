/**
 * The service on a whole history: lines appended to transcripts, each timed until the page's API
 * serves it. The root was collected and parsed before, so every pass but the one that takes a
 * line has nothing new, the way a long-running service on a laptop spends its day.
 *
 * Each line is appended at another point of the pass cycle (a tenth of the interval further after
 * a pass ended each time), so the worst case (a line written just after the pass looked at its
 * file) is among them. Two readers wait for each line: the API polled every 20 ms (the server's
 * own latency), and a reader doing what the page does (`/api/status`, then the document). The
 * service's log lines (debug, one per pass, with its stages' times) give each line's breakdown:
 * the wait for the pass that took it, that pass's land and parse stages, and what came after.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startService, type LogRecord, type RunningService } from '../helpers/service.js';

const TRIALS = Number(process.env.BENCH_SERVICE_LINES ?? 10);
const INTERVAL_MS = 1000;
/** Each poll of the API is this far apart: the measured latency is at most this much late. */
const POLL_MS = 20;
/** The page's own poll of `/api/status` before it could wait on it (page/app.ts, default). */
const PAGE_POLL_MS = 2000;
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

/** The process's CPU seconds so far (all threads), from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

/** The same configuration with the service's log at debug: one line per pass, with its stages' times. */
function debugConfig(config: string): string {
  const text = readFileSync(config, 'utf8');
  if (!text.includes('\n  telemetry:\n')) throw new Error(`${config}: no service.telemetry block to add the debug log level to`);
  const path = config.replace(/\.yaml$/, '') + '-debug.yaml';
  writeFileSync(path, text.replace('\n  telemetry:\n', '\n  telemetry:\n    logs:\n      level: debug\n'));
  return path;
}

interface PassLine {
  pass: number;
  endMs: number;
  durationMs: number;
  stages?: Record<string, number>;
  stagesCpu?: Record<string, number>;
  land?: Record<string, number>;
}

function passLines(logs: LogRecord[]): PassLine[] {
  return logs
    .filter((l) => l.msg === 'pass finished' || l.msg === 'pass finished with problems')
    .map((l) => {
      const counts = (l.counts ?? {}) as Record<string, Record<string, number>>;
      const land = Object.entries(counts).find(([k]) => k.startsWith('receivers/'))?.[1];
      return {
        pass: Number(l.pass),
        endMs: Date.parse(l.ts),
        durationMs: Number(l.duration_ms),
        stages: l.stages_ms as Record<string, number> | undefined,
        stagesCpu: l.stages_cpu_ms as Record<string, number> | undefined,
        land,
      };
    });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!) : NaN;
};
const summary = (xs: number[]) => ({ median: pct(xs, 50), p90: pct(xs, 90), max: pct(xs, 100) });

/** Waits for the next pass's log line after `afterPass`. */
async function nextPass(svc: RunningService, afterPass: number): Promise<number> {
  const r = await svc.waitFor((l) => l.msg.startsWith('pass finished') && Number(l.pass) > afterPass, GIVE_UP_MS);
  return Number(r.pass);
}

/** What the page does to learn of a change: wait on `/api/status` (or poll it, where the server cannot be waited on), then read the document. */
async function pageSees(url: string, session: string, marker: string, generation: number, t0: number): Promise<number> {
  let gen = generation;
  for (;;) {
    const asked = performance.now();
    const r = await fetch(`${url}/api/status?after=${gen}`);
    const s = (await r.json()) as { generation: number };
    if (s.generation !== gen) {
      gen = s.generation;
      const body = await (await fetch(`${url}/api/c/${session}/view`)).text();
      if (body.includes(marker)) return performance.now() - t0;
    } else if (performance.now() - asked < 1000) await sleep(PAGE_POLL_MS); // a server that answers at once: the page's own poll
    if (performance.now() - t0 > GIVE_UP_MS) throw new Error(`the page never saw the line in ${session}`);
  }
}

export async function serviceLatency(o: {
  config: string;
  projects: string;
  root: string;
  bin: string;
  appendLine: (path: string, line: string) => void;
}): Promise<Record<string, unknown>> {
  const svc = startService(['--config', debugConfig(o.config)], { killAfterMs: 600_000 });
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
    const cpu0 = cpuSeconds(svc.child.pid!);
    const quietFrom = passLines(svc.logs).length;
    const trials: Record<string, number | string>[] = [];
    let lastPass = await nextPass(svc, 0);
    for (let i = 0; i < TRIALS; i++) {
      const t = targets[(i * 7) % targets.length]!;
      const marker = `bench-history-marker-${i}-${randomUUID()}`;
      await fetch(`${url}/api/c/${t.session}/view`); // the document is current before the line
      const generation = ((await (await fetch(`${url}/api/status`)).json()) as { generation: number }).generation;
      lastPass = await nextPass(svc, lastPass);
      const offset = Math.round((i / TRIALS) * INTERVAL_MS);
      await sleep(offset);
      const line = promptLine(t.path, marker);
      const appendedAt = Date.now();
      const t0 = performance.now();
      o.appendLine(t.path, line);
      const page = pageSees(url, t.session, marker, generation, t0);
      let apiMs: number;
      for (;;) {
        const body = await (await fetch(`${url}/api/c/${t.session}/view`)).text();
        if (body.includes(marker)) {
          apiMs = performance.now() - t0;
          break;
        }
        if (performance.now() - t0 > GIVE_UP_MS) throw new Error(`the appended line never reached the page for ${t.session}`);
        await sleep(POLL_MS);
      }
      const pageMs = await page;
      // The pass that took the line: the first to land a file that ended after the append.
      const took = passLines(svc.logs).find((p) => p.endMs >= appendedAt && (p.land?.landed_files ?? 0) > 0);
      const row: Record<string, number | string> = { offset_ms: offset, api_ms: Math.round(apiMs), page_ms: Math.round(pageMs) };
      if (took) {
        const start = took.endMs - took.durationMs;
        Object.assign(row, {
          wait_for_pass_ms: Math.round(start - appendedAt),
          pass_ms: Math.round(took.durationMs),
          land_ms: took.stages?.land ?? NaN,
          parse_ms: took.stages?.parse ?? NaN,
          after_pass_ms: Math.round(appendedAt + apiMs - took.endMs),
        });
        for (const k of ['discover_ms', 'judge_ms', 'collect_ms', 'finish_ms']) if (took.land?.[k] !== undefined) row[`land_${k}`] = took.land[k]!;
      }
      const built = svc.logs.filter((l) => l.msg === 'view built' && l.conversation === t.session && Date.parse(l.ts) >= appendedAt).pop();
      if (built) row.view_build_ms = Number(built.ms);
      trials.push(row);
      lastPass = Math.max(lastPass, took?.pass ?? 0);
    }
    const cpuS = cpuSeconds(svc.child.pid!) - cpu0;
    // Passes with nothing to land: what every second of the service's day costs.
    const quiet = passLines(svc.logs)
      .slice(quietFrom)
      .filter((p) => (p.land?.landed_files ?? 0) === 0 && p.stages);
    const col = (k: string) => trials.map((r) => Number(r[k]));
    return {
      interval_ms: INTERVAL_MS,
      ready_s: +(readyMs / 1000).toFixed(2),
      lines: TRIALS,
      line_to_api_ms: summary(col('api_ms')),
      line_to_page_ms: summary(col('page_ms')),
      median_ms: pct(col('api_ms'), 50),
      max_ms: pct(col('api_ms'), 100),
      breakdown_ms: {
        wait_for_pass: summary(col('wait_for_pass_ms')),
        pass: summary(col('pass_ms')),
        land: summary(col('land_ms')),
        parse: summary(col('parse_ms')),
        after_pass: summary(col('after_pass_ms')),
        view_build: summary(col('view_build_ms')),
      },
      quiet_pass: {
        passes: quiet.length,
        wall_ms: summary(quiet.map((p) => p.durationMs)),
        land_ms: summary(quiet.map((p) => p.stages!.land ?? NaN)),
        parse_ms: summary(quiet.map((p) => p.stages!.parse ?? NaN)),
        land_cpu_ms: summary(quiet.map((p) => p.stagesCpu?.land ?? NaN)),
        parse_cpu_ms: summary(quiet.map((p) => p.stagesCpu?.parse ?? NaN)),
      },
      service_cpu_s: +cpuS.toFixed(2),
      trials,
      peak_rss_mb: peakRssMb(svc.child.pid!),
      poll_ms: POLL_MS,
      target: '<= interval + 200 ms (max)',
    };
  } finally {
    svc.child.kill('SIGTERM');
    await svc.exited;
  }
}

/** A pipeline YAML for `root`, collecting `projects`, with the view and self-metrics on loopback. */
export function historyConfig(path: string, root: string, projects: string): string {
  writeFileSync(
    path,
    [
      'storage:',
      `  root: ${JSON.stringify(root)}`,
      'receivers:',
      '  claude_code_local:',
      `    source_root: ${JSON.stringify(projects)}`,
      '    exclude: []',
      '    interval: 1s',
      'processors:',
      '  assembler:',
      'extensions:',
      '  view:',
      '    endpoint: 127.0.0.1:0',
      'service:',
      '  extensions: [view]',
      '  pipelines:',
      '    sessions:',
      '      receivers: [claude_code_local]',
      '      processors: [assembler]',
      '  telemetry:',
      '    metrics:',
      '      address: 127.0.0.1:0',
      '',
    ].join('\n'),
  );
  return path;
}
