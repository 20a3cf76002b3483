#!/usr/bin/env node
/**
 * Where a first collect's user CPU goes, step by step, on one thread (issue 19). Usage:
 *   node scripts/collect-cpu-steps.mjs <projects dir> <worktree> [<worktree> ...]
 * Each worktree must be built. Every round runs each step once per build, builds alternated, so a
 * loaded machine slows all of them alike; one JSON document with each step's user and sys seconds
 * per round goes to stdout. The steps add one piece of a collect at a time over every `.jsonl` line:
 *   floor    read, decode, JSON.parse and SHA-256 each line (what bench:history calls the floor)
 *   convert  read, the line's short SHA-256 and the dialect's conversion
 *   encode   convert, provenance, and the record's JSON text
 *   write    encode through a SessionDataWriter into a reused buffer: UTF-8 and the file digest
 *   pass     a whole in-process pass (LocalCollector.pass, one thread) into a fresh root
 * What `pass` costs beyond `write` is per file and per session (directories, cursors, index,
 * locks, syncs), not per line. ROUNDS (default 3) and STEPS (comma list) narrow a run.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';

const [projectsArg, ...trees] = process.argv.slice(2);
if (!projectsArg || trees.length === 0) {
  process.stderr.write('usage: collect-cpu-steps.mjs <projects dir> <worktree> [<worktree> ...]\n');
  process.exit(2);
}
const projects = resolve(projectsArg);
const rounds = Number(process.env.ROUNDS ?? 3);
const wanted = (process.env.STEPS ?? 'floor,convert,encode,write,pass').split(',');
const work = mkdtempSync(join(tmpdir(), 'aszcol-cpu-steps-'));

const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
const transcripts = walk(projects).filter((p) => p.endsWith('.jsonl'));

/** Calls `each(line, offset)` for every non-empty line of every transcript. */
function eachLine(each) {
  for (const path of transcripts) {
    const buf = readFileSync(path);
    for (let from = 0; from < buf.length;) {
      let nl = buf.indexOf(10, from);
      if (nl < 0) nl = buf.length;
      if (nl > from) each(buf.subarray(from, nl), from);
      from = nl + 1;
    }
  }
}

/** The steps of one build, its modules loaded from its own `dist`. */
async function stepsOf(tree) {
  const load = (p) => import(join(resolve(tree), 'dist/src', p));
  const { convertTranscriptLine } = await load('adapters/claude-code/dialect.js');
  const { encodeRecord, SessionDataWriter, shortSha } = await load('formats/session-data/encode.js');
  const { LocalCollector } = await load('receivers/claude-code-local/pass.js');
  const record = (line, off) => Object.assign(convertTranscriptLine(line), { ord: 1, off, sha: shortSha(line), bytes: line.length });
  let passes = 0;
  return {
    floor: () =>
      eachLine((line) => {
        JSON.parse(line.toString('utf8'));
        createHash('sha256').update(line).digest();
      }),
    convert: () => eachLine((line) => (shortSha(line), convertTranscriptLine(line))),
    encode: () => eachLine((line, off) => encodeRecord(record(line, off))),
    write: () => {
      // The landing file's way of writing a line: UTF-8 into one reused buffer, the digest fed from there.
      const out = Buffer.allocUnsafe(1 << 20);
      let used = 0;
      const sink = {
        write() {},
        writeLine(text, digest) {
          if (text.length * 3 + 1 > out.length - used) used = 0;
          const start = used;
          used += out.write(text, used, 'utf8');
          out[used++] = 10;
          digest.update(out.subarray(start, used));
        },
      };
      for (const path of transcripts) {
        const w = new SessionDataWriter(sink, { kind: 'transcript', adapter: 'steps', dialect: 'steps', src: path, session: 's', seq: 1, at: 'now' });
        const buf = readFileSync(path);
        for (let from = 0; from < buf.length;) {
          let nl = buf.indexOf(10, from);
          if (nl < 0) nl = buf.length;
          if (nl > from) w.add(record(buf.subarray(from, nl), from));
          from = nl + 1;
        }
        w.close();
      }
    },
    pass: () => {
      // A fresh root each time; removing it is left to the end so no step pays for it.
      const root = join(work, `${trees.indexOf(tree)}-${++passes}`);
      const r = new LocalCollector({ root, sourceRoot: projects, filter: { include: [], exclude: [] }, maxDeltaBytes: 8 << 20 }).pass();
      if (r.errors.length) throw new Error(`${tree}: ${JSON.stringify(r.errors.slice(0, 3))}`);
    },
  };
}

function cpu(fn) {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return { user: +(c.user / 1e6).toFixed(3), sys: +(c.system / 1e6).toFixed(3) };
}

const builds = await Promise.all(trees.map(stepsOf));
const result = { projects, transcripts: transcripts.length, rounds, load: [], steps: {} };
try {
  for (let r = 0; r < rounds; r++) {
    result.load.push(Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]));
    for (const step of wanted)
      builds.forEach((b, i) => {
        const k = `${step} ${trees[i]}`;
        (result.steps[k] ??= []).push(cpu(b[step]));
      });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(result, null, 1)}\n`);
