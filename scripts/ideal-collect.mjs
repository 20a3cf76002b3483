#!/usr/bin/env node
/**
 * The fastest a first collect could be on this machine with the Session Data format and the storage
 * root's layout (issue 19): lower bounds, not a collector. Usage:
 *   node scripts/ideal-collect.mjs <projects dir> [rounds]      (after `npm run build`: it runs the built code)
 * Each round measures, wall time, one after the other, in an order shuffled anew each round (the
 * same every run):
 *   floor   one thread reads every `.jsonl` line, JSON.parse and SHA-256 (bench:history's floor, less
 *           the small `.json` documents), measured before and after the round's variants; ratios use their mean
 *   ideal   two worker threads (this machine's cores), each given whole sessions worth half the bytes,
 *           convert and encode every line exactly as a collect does (the dialect's conversion,
 *           provenance, the record's JSON, UTF-8, the file digest) into one landed file per source in
 *           one flat directory, each file's fsync on the thread pool while the work goes on, one fsync
 *           of the directory. No cursors, index, locks, session directories or sweeps.
 *   ideal_syncfs  the same with no fsync per file but one `sync -f` (syncfs) of the filesystem at the end
 *   ideal_nosync  the same without any sync (what the format's CPU work alone allows; not durable)
 * then the storage root's per-session files added one kind at a time, each variant everything the
 * one before it does, with each file's fsync on the thread pool as `ideal`:
 *   dirs         each file lands in the root's layout, `<session>/streams/<stream>/` (made with mkdir)
 *   lock         + the session's `.lock`, made exclusively before its first file and removed once its
 *                files are durable (the cheapest lock: no temporary, no link)
 *   cursor       + one cursor file per session, written to a temporary, synced, renamed into place
 *   index        + `index/` and its one file per session, the same way
 * and the same files made other ways:
 *   dirs_pool    `dirs` with every directory made on the thread pool from the start, awaited only
 *                before the first file that goes in it
 *   dirs_syncfs, index_syncfs  `dirs` and `index` with no fsync at all but one `sync -f` at the end
 *                (a real commit needs a second one before its state files move: these are kinder)
 *   durable      `index_syncfs` with what crash safety adds, in a crash-safe order: each landed file
 *                written under a temporary name, one `sync -f`, then every file renamed into its
 *                name, each cursor carrying the SHA-256 of its source's last MiB (the format's tail
 *                digest), the state files written and the locks removed, then a second `sync -f`
 *                (the index file still filler: an index is derived, a collector need not build one)
 *   durable_in_place  `durable` with each file written under its own name from the start (a torn one
 *                told by its missing closing line instead), so no renames
 * and, beside them in the same conditions, the real thing:
 *   collect      `aszcol collect --once` (this build) into an empty root: the whole command's wall time
 *                and CPU, process start included, and `pass_s`, the pass's own duration
 * Directory fsyncs of the layout are left out (one of the root at the end), so the layout variants are
 * bounds from above. Workers are started and warmed before the clock; before each variant the
 * previous one's files are written back and left a second to settle, untimed; every variant's files
 * stay until the end (about 270 MB each on a 255 MB corpus). JSON on stdout; `of_floor` is floor /
 * wall, the figure bench:history's target (>= 0.6) is stated in.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import {
  closeSync,
  fsync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { mkdir as mkdirAsync } from 'node:fs/promises';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(repo, 'dist', 'src');

/** The layout's file kinds in order; each layout variant does everything the one before it does. */
const LAYOUT = ['dirs', 'lock', 'cursor', 'index'];
/** Each variant: the layout it writes up to (none: flat), how it is made durable, whether its directories are made on the thread pool. */
const SPEC = {
  ideal: { sync: 'fsync' },
  ideal_syncfs: { sync: 'syncfs' },
  ideal_nosync: { sync: 'none' },
  dirs: { layout: 'dirs', sync: 'fsync' },
  lock: { layout: 'lock', sync: 'fsync' },
  cursor: { layout: 'cursor', sync: 'fsync' },
  index: { layout: 'index', sync: 'fsync' },
  dirs_pool: { layout: 'dirs', sync: 'fsync', pool: true },
  dirs_syncfs: { layout: 'dirs', sync: 'syncfs' },
  index_syncfs: { layout: 'index', sync: 'syncfs' },
  durable: { layout: 'index', sync: 'syncfs', durable: 'rename' },
  durable_in_place: { layout: 'index', sync: 'syncfs', durable: 'in place' },
  collect: {},
};
const VARIANTS = Object.keys(SPEC);

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
  /** `bytes` written to a new file at `path`; with `sync`, its fsync on the thread pool (the promise settles once it is durable). */
  const writeNew = async (path, bytes, length, sync) => {
    const fd = openSync(path, 'wx');
    writeSync(fd, bytes, 0, length);
    if (!sync) return closeSync(fd);
    await new Promise((res, rej) => fsync(fd, (err) => (closeSync(fd), err ? rej(err) : res())));
  };
  /** A small state file: written to a temporary, synced (unless a syncfs follows), renamed into place once synced. */
  /** `content` a byte count of filler, or the text itself. */
  const stateFile = (final, content, sync) => {
    const bytes = typeof content === 'number' ? Buffer.alloc(content, 0x61) : Buffer.from(content);
    return writeNew(`${final}.tmp`, bytes, bytes.length, sync).then(() => renameSync(`${final}.tmp`, final));
  };
  /** With `tails`, the source's tail digest (the SHA-256 of its last MiB, as a cursor keeps) is pushed there. */
  const landFile = (path, target, sync, tails) => {
    used = 0;
    const w = new SessionDataWriter(sink, { kind: 'transcript', adapter: 'ideal', dialect: 'ideal', src: path, session: 's', seq: 1, at: 'now' });
    const source = readFileSync(path);
    eachLine(source, (line, off) => w.add(Object.assign(convertTranscriptLine(line), { ord: 1, off, sha: shortSha(line), bytes: line.length })));
    if (tails)
      tails.push(
        createHash('sha256')
          .update(source.subarray(Math.max(0, source.length - (1 << 20))))
          .digest('hex'),
      );
    if (out.length - used < 4096) out = Buffer.concat([out.subarray(0, used), Buffer.alloc(4096)]);
    w.close();
    return writeNew(target, out, used, sync);
  };
  /** What `durable` installs once its files are synced: each file's temporary and final name, each session's state files and lock. */
  let toInstall = [];
  // The state files get no sync of their own: the second syncfs covers them.
  const install = async () => {
    for (const { files, home, lock, tails } of toInstall) {
      for (const [tmp, final] of files) renameSync(tmp, final);
      mkdirSync(join(home, 'index'));
      await Promise.all([
        stateFile(join(home, 'sources.cursor'), `${tails.join('\n')}\n`.padEnd(600, ' '), false),
        stateFile(join(home, 'index', 'entries.bin'), 2400, false),
      ]);
      unlinkSync(lock);
    }
    toInstall = [];
  };
  const land = async (sessions, dir, sync, layout, pool, durable) => {
    const upTo = LAYOUT.indexOf(layout); // -1: flat
    let n = 0;
    const syncs = [];
    // With `pool`, every session's directories are made on the thread pool from the start, each awaited only before its first file.
    const made = new Map();
    if (pool)
      for (const s of sessions) {
        const home = join(dir, s.id);
        const streams = mkdirAsync(home).then(() => mkdirAsync(join(home, 'streams')));
        for (const f of s.files)
          made.set(
            `${s.id}/${f.stream}`,
            streams.then(() => mkdirAsync(join(home, 'streams', f.stream))),
          );
      }
    for (const s of sessions) {
      if (upTo < 0) {
        for (const f of s.files) syncs.push(landFile(f.path, join(dir, `${workerData.id}-${++n}.sd`), sync));
        continue;
      }
      const home = join(dir, s.id);
      if (!pool) mkdirSync(home);
      const lock = join(home, '.lock');
      if (upTo >= 1) {
        const fd = openSync(lock, 'wx');
        writeSync(fd, `${process.pid} ideal`);
        closeSync(fd);
      }
      if (!pool) mkdirSync(join(home, 'streams'));
      const mine = [];
      if (durable) {
        // Files under temporary names now; their renames, the cursors and the index after the first syncfs (install).
        const pending = { files: [], home, lock, tails: [] };
        for (const f of s.files) {
          const at = join(home, 'streams', f.stream);
          mkdirSync(at);
          const final = join(at, `transcript-${++n}.sd`);
          const tmp = durable === 'in place' ? final : join(at, `.tmp-transcript-${n}.sd-${process.pid}`);
          if (tmp !== final) pending.files.push([tmp, final]);
          mine.push(landFile(f.path, tmp, false, pending.tails));
        }
        toInstall.push(pending);
        syncs.push(...mine);
        continue;
      }
      for (const f of s.files) {
        const at = join(home, 'streams', f.stream);
        if (pool) await made.get(`${s.id}/${f.stream}`);
        else mkdirSync(at);
        mine.push(landFile(f.path, join(at, `transcript-${++n}.sd`), sync));
      }
      // The session's state files follow its landed files' syncs, and its lock goes after them.
      const after = Promise.all(mine).then(() => {
        const states = [];
        if (upTo >= 2) states.push(stateFile(join(home, 'sources.cursor'), 600, sync));
        if (upTo >= 3) {
          mkdirSync(join(home, 'index'));
          states.push(stateFile(join(home, 'index', 'entries.bin'), 2400, sync));
        }
        return Promise.all(states).then(() => upTo >= 1 && unlinkSync(lock));
      });
      syncs.push(after);
    }
    await Promise.all(syncs);
    if (sync) {
      const d = openSync(dir, 'r');
      fsyncSync(d);
      closeSync(d);
    }
  };
  parentPort.on('message', ({ sessions, dir, sync, layout, pool, durable, phase }) => {
    if (phase === 'install') {
      void install().then(
        () => parentPort.postMessage('done'),
        (err) => parentPort.postMessage(`failed: ${err.message}`),
      );
      return;
    }
    void land(sessions, dir, sync, layout, pool, durable).then(
      () => parentPort.postMessage('done'),
      (err) => parentPort.postMessage(`failed: ${err.message}`),
    );
  });
}

/** The corpus's transcripts by session: `<project>/<id>.jsonl` is the session's main stream, `<project>/<id>/…/<agent>.jsonl` a child stream. */
function sessionsOf(projects, files) {
  const byId = new Map();
  for (const f of files) {
    const parts = relative(projects, f.p).split(sep);
    const id = parts[1].replace(/\.jsonl$/, '');
    const stream = parts.length === 2 ? 'main' : basename(f.p, '.jsonl');
    const s = byId.get(id) ?? { id, files: [], bytes: 0 };
    byId.set(id, s);
    s.files.push({ path: f.p, stream });
    s.bytes += f.size;
  }
  return [...byId.values()].sort((a, b) => b.bytes - a.bytes);
}

/** `items` in an order drawn from `seed` (a small linear congruential generator): each round its own order, the same every run. */
function shuffled(items, seed) {
  const out = [...items];
  let x = seed * 2654435761;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

async function main() {
  const projects = resolve(process.argv[2] ?? '');
  const rounds = Number(process.argv[3] ?? 3);
  const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
  const files = walk(projects)
    .filter((p) => p.endsWith('.jsonl'))
    .map((p) => ({ p, size: statSync(p).size }))
    .sort((a, b) => b.size - a.size);
  const sessions = sessionsOf(projects, files);
  // Whole sessions to each thread (a session's lock and files belong to one writer), half the bytes each.
  const halves = [
    { sessions: [], bytes: 0 },
    { sessions: [], bytes: 0 },
  ];
  for (const s of sessions) {
    const h = halves[0].bytes <= halves[1].bytes ? halves[0] : halves[1];
    h.sessions.push(s);
    h.bytes += s.bytes;
  }
  const work = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-ideal-'));
  const workers = halves.map((_, id) => new Worker(fileURLToPath(import.meta.url), { workerData: { id } }));
  for (const w of workers) w.setMaxListeners(0);
  const ask = (w, msg) =>
    new Promise((res, rej) => {
      w.once('message', (m) => (m === 'done' ? res() : rej(new Error(m))));
      w.once('error', rej);
      w.postMessage(msg);
    });
  let runs = 0;
  const run = async (variant) => {
    // Nothing is removed until the end: freeing thousands of inodes between variants made each later
    // variant's mkdir and create slower on ext4 (the layout variants' kernel time doubled by the third round).
    execFileSync('sync');
    await new Promise((res) => setTimeout(res, 1000)); // the last variant's write-back settles before the clock
    const dir = join(work, `r${++runs}`);
    mkdirSync(dir);
    if (variant === 'collect') return collect(dir);
    const { layout, sync: how, pool, durable } = SPEC[variant];
    const sync = how === 'fsync';
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(workers.map((w, i) => ask(w, { sessions: halves[i].sessions, dir, sync, layout, pool, durable })));
    if (how === 'syncfs') execFileSync('sync', ['-f', dir]);
    if (durable) {
      // The landed files are durable: now their names, the cursors and the index, and a second syncfs before anything counts them.
      await Promise.all(workers.map((w) => ask(w, { phase: 'install' })));
      execFileSync('sync', ['-f', dir]);
    }
    const wall = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    return { wall_s: +wall.toFixed(3), cpu_s: +((c.user + c.system) / 1e6).toFixed(2), sys_s: +(c.system / 1e6).toFixed(2) };
  };
  /** The real `collect --once` into `dir` as its storage root, its CPU from `/usr/bin/time` when there is one. */
  const collect = async (dir) => {
    const config = join(work, `collect-${runs}.yaml`);
    // The configuration bench:history collects with (the service's parts it names are not started by `collect --once`).
    const { historyConfig } = await import(join(repo, 'dist', 'test', 'bench', 'history-service.js'));
    historyConfig(config, dir, projects);
    const args = [join(repo, 'bin', 'aszcol.js'), 'collect', '--once', '--json', '--config', config];
    const timed = statSync('/usr/bin/time', { throwIfNoEntry: false }) !== undefined;
    const t0 = performance.now();
    const { stdout, stderr } = await new Promise((res, rej) =>
      execFile(
        timed ? '/usr/bin/time' : process.execPath,
        timed ? ['-f', 'ASZ_CPU=%U %S', process.execPath, ...args] : args,
        { maxBuffer: 1 << 24 },
        (err, stdout, stderr) => (err ? rej(new Error(`collect --once failed: ${stderr || err.message}`)) : res({ stdout, stderr })),
      ),
    );
    const wall = (performance.now() - t0) / 1000;
    const pass = JSON.parse(stdout.trim().split('\n').pop());
    if (pass.errors.length) throw new Error(`collect --once reported errors: ${JSON.stringify(pass.errors.slice(0, 3))}`);
    const cpu = /ASZ_CPU=([\d.]+) ([\d.]+)/.exec(stderr);
    return {
      wall_s: +wall.toFixed(3),
      ...(cpu ? { cpu_s: +(Number(cpu[1]) + Number(cpu[2])).toFixed(2), sys_s: Number(cpu[2]) } : {}),
      pass_s: pass.durationMs / 1000,
      landed_files: pass.landedFiles,
    };
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
  const result = {
    projects,
    sessions: sessions.length,
    transcripts: files.length,
    mb: +(files.reduce((s, f) => s + f.size, 0) / 2 ** 20).toFixed(1),
    rounds: [],
  };
  try {
    await run('ideal_nosync'); // warm both workers' code once, untimed
    for (let r = 0; r < rounds; r++) {
      const load = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
      const before = floor();
      const order = shuffled(VARIANTS, r + 1);
      const measured = {};
      for (const v of order) measured[v] = await run(v);
      const after = floor();
      const floor_s = +((before + after) / 2).toFixed(3);
      const round = { load, floor_s, floors_s: [before, after], order };
      for (const v of VARIANTS) round[v] = { ...measured[v], of_floor: +(floor_s / measured[v].wall_s).toFixed(2) };
      result.rounds.push(round);
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(result, null, 1)}\n`);
}

if (isMainThread) await main();
else await worker();
