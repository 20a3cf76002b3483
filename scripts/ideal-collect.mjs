#!/usr/bin/env node
/**
 * The fastest a first collect could be on this machine with the Session Data format (issue 19): a
 * lower bound, not a collector. Usage: node scripts/ideal-collect.mjs <projects dir> [rounds]
 * Each round measures, wall time, one after the other:
 *   floor   one thread reads every `.jsonl` line, JSON.parse and SHA-256 (bench:history's floor)
 *   ideal   two worker threads (this machine's cores), each given half the bytes, convert and encode
 *           every line exactly as a collect does (the dialect's conversion, provenance, the record's
 *           JSON, UTF-8, the file digest) into one landed file per source in one flat directory,
 *           each file's fsync on the thread pool while the work goes on, one fsync of the directory. No cursors, index, locks, session
 *           directories or sweeps: everything a real pass does beyond this is left out.
 *   ideal_syncfs  the same with no fsync per file but one `sync -f` (syncfs) of the filesystem at the end
 *   ideal_nosync  the same without any sync (what the format's CPU work alone allows; not durable).
 * Workers are started and warmed before the clock starts; before each variant the previous one's files
 * are removed and written back, untimed. JSON on stdout; `of_floor` is floor / wall,
 * the figure bench:history's target (>= 0.6) is stated in.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { closeSync, fsync, fsyncSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join, resolve, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src');

function eachLine(buf, each) {
  for (let from = 0; from < buf.length;) {
    let nl = buf.indexOf(10, from);
    if (nl < 0) nl = buf.length;
    if (nl > from) each(buf.subarray(from, nl), from);
    from = nl + 1;
  }
}

async function worker() {
  const { convertTranscriptLine } = await import(join(dist, 'adapters/claude-code/dialect.js'));
  const { SessionDataWriter, shortSha } = await import(join(dist, 'formats/session-data/encode.js'));
  let out = Buffer.allocUnsafe(8 << 20);
  let used = 0;
  const sink = {
    write(text) {
      used += out.write(text, used, 'utf8');
    },
    writeLine(text, digest) {
      if (text.length * 3 + 1 > out.length - used) {
        const bigger = Buffer.allocUnsafe(Math.max(out.length * 2, used + text.length * 3 + 1));
        out.copy(bigger, 0, 0, used);
        out = bigger;
      }
      const start = used;
      used += out.write(text, used, 'utf8');
      out[used++] = 10;
      digest.update(out.subarray(start, used));
    },
  };
  const land = async (files, dir, sync) => {
    let n = 0;
    const syncs = [];
    for (const path of files) {
      used = 0;
      const w = new SessionDataWriter(sink, { kind: 'transcript', adapter: 'ideal', dialect: 'ideal', src: path, session: 's', seq: 1, at: 'now' });
      eachLine(readFileSync(path), (line, off) => w.add(Object.assign(convertTranscriptLine(line), { ord: 1, off, sha: shortSha(line), bytes: line.length })));
      if (out.length - used < 4096) out = Buffer.concat([out.subarray(0, used), Buffer.alloc(4096)]);
      w.close();
      const fd = openSync(join(dir, `${workerData.id}-${++n}.sd`), 'wx');
      writeSync(fd, out, 0, used);
      // As the collector's batches do: each file's fsync on the thread pool while the next file is made.
      if (sync) syncs.push(new Promise((res, rej) => fsync(fd, (err) => (closeSync(fd), err ? rej(err) : res()))));
      else closeSync(fd);
    }
    await Promise.all(syncs);
    if (sync) {
      const d = openSync(dir, 'r');
      fsyncSync(d);
      closeSync(d);
    }
  };
  parentPort.on('message', ({ files, dir, sync }) => {
    void land(files, dir, sync).then(() => parentPort.postMessage('done'));
  });
}

async function main() {
  const projects = resolve(process.argv[2] ?? '');
  const rounds = Number(process.argv[3] ?? 3);
  const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
  const files = walk(projects)
    .filter((p) => p.endsWith('.jsonl'))
    .map((p) => ({ p, size: statSync(p).size }))
    .sort((a, b) => b.size - a.size);
  // Two halves by bytes, largest first into the lighter half.
  const halves = [
    { files: [], bytes: 0 },
    { files: [], bytes: 0 },
  ];
  for (const f of files) {
    const h = halves[0].bytes <= halves[1].bytes ? halves[0] : halves[1];
    h.files.push(f.p);
    h.bytes += f.size;
  }
  const work = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-ideal-'));
  const workers = halves.map((_, id) => new Worker(fileURLToPath(import.meta.url), { workerData: { id } }));
  const ask = (w, msg) => new Promise((res, rej) => (w.once('message', res), w.once('error', rej), w.postMessage(msg)));
  let runs = 0;
  // process.cpuUsage counts every thread of the process, so it is read here, around both workers.
  const ideal = async (sync) => {
    // The last variant's files gone and every dirty page written back first, untimed: a variant pays for its own writes only.
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work);
    execFileSync('sync');
    const dir = join(work, `r${++runs}`);
    mkdirSync(dir);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(workers.map((w, i) => ask(w, { files: halves[i].files, dir, sync: sync === 'fsync' })));
    if (sync === 'syncfs') execFileSync('sync', ['-f', dir]);
    const wall = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    return { wall_s: +wall.toFixed(3), cpu_s: +((c.user + c.system) / 1e6).toFixed(2), sys_s: +(c.system / 1e6).toFixed(2) };
  };
  const floor = () => {
    const t0 = performance.now();
    for (const f of files)
      eachLine(readFileSync(f.p), (line) => {
        JSON.parse(line.toString('utf8'));
        createHash('sha256').update(line).digest();
      });
    return +((performance.now() - t0) / 1000).toFixed(3);
  };
  const result = { projects, transcripts: files.length, mb: +(files.reduce((s, f) => s + f.size, 0) / 2 ** 20).toFixed(1), rounds: [] };
  try {
    await ideal('none'); // warm both workers' code once, untimed
    for (let r = 0; r < rounds; r++) {
      const load = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
      const floor_s = floor();
      const withSync = await ideal('fsync');
      const syncfs = await ideal('syncfs');
      const noSync = await ideal('none');
      result.rounds.push({
        load,
        floor_s,
        ideal: { ...withSync, of_floor: +(floor_s / withSync.wall_s).toFixed(2) },
        ideal_syncfs: { ...syncfs, of_floor: +(floor_s / syncfs.wall_s).toFixed(2) },
        ideal_nosync: { ...noSync, of_floor: +(floor_s / noSync.wall_s).toFixed(2) },
      });
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(result, null, 1)}\n`);
}

if (isMainThread) await main();
else await worker();
