import { REGISTRY } from '../../src/service/registry.js';
import { localReceiverConfig } from '../../src/service/pipelines.js';
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative } from 'node:path';
import { minimatch } from 'minimatch';
import { parseConfig } from '../../src/service/config.js';
import { REPO } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { locksUnder, pollHttp } from '../helpers/service.js';

afterAll(cleanupTemp);

const DOCKERFILE = join(REPO, 'deploy', 'Dockerfile');

interface Instruction {
  op: string;
  args: string;
  line: number;
}
interface Stage {
  from: string;
  name?: string;
  steps: Instruction[];
}

/** The Dockerfile as stages of instructions (continuation lines joined, comments dropped). */
function dockerStages(): Stage[] {
  const lines = readFileSync(DOCKERFILE, 'utf8').split('\n');
  const stages: Stage[] = [];
  let buf = '';
  let start = 0;
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!buf && (line === '' || line.startsWith('#'))) return;
    if (!buf) start = i + 1;
    buf += (buf ? ' ' : '') + line.replace(/\\$/, '').trim();
    if (line.endsWith('\\')) return;
    const [op, ...rest] = buf.split(/\s+/);
    const ins = { op: op!.toUpperCase(), args: rest.join(' '), line: start };
    buf = '';
    if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args)!;
      stages.push({ from: m[1]!, name: m[2], steps: [] });
    } else {
      stages.at(-1)!.steps.push(ins);
    }
  });
  return stages;
}

const stepsOf = (s: Stage, op: string) => s.steps.filter((x) => x.op === op);
const execArgs = (args: string) => JSON.parse(args.replace(/^.*?CMD\s+/, '')) as string[];

/** The container configuration the image ships, parsed by the real loader. */
function containerConfig(env: NodeJS.ProcessEnv = { CLAUDE_CONFIG_DIR: '/claude', HOME: '/home/node' }) {
  return parseConfig(readFileSync(join(REPO, 'deploy', 'aszcol.container.yaml'), 'utf8'), env, 'deploy/aszcol.container.yaml', REGISTRY);
}
const configOf = (id: string) => containerConfig().components.find((c) => c.id === id)!.config as any;

/** Packages `npm ci --omit=dev` installs at the top of node_modules. */
function productionPackages(): Set<string> {
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const out = new Set<string>();
  for (const [k, v] of Object.entries(lock.packages)) {
    if (!k || v.dev) continue;
    const parts = k.split('node_modules/');
    if (parts.length === 2) out.add(parts[1]!);
  }
  return out;
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

describe('deploy/Dockerfile', () => {
  test('multi-stage: compile, production dependencies, then a runtime with neither compiler nor tests', () => {
    const stages = dockerStages();
    expect(stages.length).toBeGreaterThanOrEqual(3);
    const final = stages.at(-1)!;
    const build = stages.find((s) => s.name === 'build')!;
    const deps = stages.find((s) => s.name === 'deps')!;
    expect(stepsOf(build, 'RUN').some((r) => /\btsc -p deploy\/tsconfig\.build\.json\b/.test(r.args))).toBe(true);
    expect(
      stepsOf(deps, 'RUN')
        .map((r) => r.args)
        .join(' '),
    ).toMatch(/npm ci --omit=dev/);
    const copies = stepsOf(final, 'COPY').map((c) => c.args);
    expect(copies).toContain('--from=deps /app/node_modules ./node_modules');
    expect(copies).toContain('--from=build /src/dist/src ./dist/src');
    // Nothing from the build stage's node_modules (dev dependencies), no tests, no TypeScript sources.
    expect(copies.filter((c) => c.startsWith('--from=build')).every((c) => c.includes('/dist/src'))).toBe(true);
    expect(copies.some((c) => /\b(test|src)\b/.test(c.split(' ')[0]!) && !c.startsWith('--from'))).toBe(false);
    expect(stepsOf(final, 'RUN').every((r) => !/npm (ci|install)/.test(r.args))).toBe(true);
    for (const s of stages) expect(s.from).toMatch(/^node:20-/);
  });

  test('runs as a non-root user, numerically, so runAsNonRoot can check it', () => {
    const final = dockerStages().at(-1)!;
    const user = stepsOf(final, 'USER').at(-1)!.args;
    const uid = Number(user.split(':')[0]);
    expect(Number.isInteger(uid) && uid > 0).toBe(true);
    const entry = JSON.parse(stepsOf(final, 'ENTRYPOINT')[0]!.args) as string[];
    expect(entry).toEqual(['node', '/app/bin/aszcol.js']);
  });

  test('HEALTHCHECK asks the health_check extension of the configuration the image runs; EXPOSE matches its listeners', () => {
    const final = dockerStages().at(-1)!;
    const hc = stepsOf(final, 'HEALTHCHECK')[0]!.args;
    const cmd = execArgs(hc);
    expect(cmd.slice(0, 2)).toEqual(['node', '-e']);
    const cfg = containerConfig();
    expect(cfg.service.extensions).toContain('health_check');
    const health = configOf('health_check');
    expect(cmd[2]).toContain(`http://127.0.0.1:${health.endpoint.port}${health.path}`);
    // The configuration the image runs is the one it copies in.
    const cmdArgs = JSON.parse(stepsOf(final, 'CMD').at(-1)!.args) as string[];
    const copied = stepsOf(final, 'COPY')
      .find((c) => c.args.startsWith('deploy/aszcol.container.yaml '))!
      .args.split(' ')[1];
    expect(cmdArgs).toEqual(['--config', copied]);
    const exposed = stepsOf(final, 'EXPOSE')
      .flatMap((e) => e.args.split(/\s+/).map(Number))
      .sort();
    const otlp = configOf('claude_code_otlp');
    const [viewHost, viewPort] = (configOf('view').endpoint as string).split(':');
    expect(exposed).toEqual([otlp.grpc.port, otlp.http.port, Number(viewPort), cfg.service.telemetry.metrics.address!.port, health.endpoint.port].sort());
    // Listeners inside a container must be reachable from outside it.
    for (const host of [otlp.grpc.host, otlp.http.host, viewHost, health.endpoint.host, cfg.service.telemetry.metrics.address!.host])
      expect(host).toBe('0.0.0.0');
    // The storage root is the declared volume; the source root follows CLAUDE_CONFIG_DIR.
    expect(stepsOf(final, 'VOLUME')[0]!.args).toBe(`["${cfg.storageRoot}"]`);
    expect(
      stepsOf(final, 'ENV')
        .map((e) => e.args)
        .join(' '),
    ).toMatch(/CLAUDE_CONFIG_DIR=\/claude/);
    expect(localReceiverConfig(cfg).sourceRoot).toBe('/claude/projects');
  });

  test('every file the build copies exists and is let through by Dockerfile.dockerignore', () => {
    const ignore = readFileSync(join(REPO, 'deploy', 'Dockerfile.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const included = (rel: string) => {
      let inc = true;
      for (const pat of ignore) {
        const neg = pat.startsWith('!');
        const p = neg ? pat.slice(1) : pat;
        if (minimatch(rel, p, { dot: true }) || minimatch(rel, `${p}/**`, { dot: true })) inc = neg;
      }
      return inc;
    };
    const sources = dockerStages()
      .flatMap((s) => stepsOf(s, 'COPY'))
      .filter((c) => !c.args.startsWith('--from'))
      .flatMap((c) => c.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(5);
    for (const src of sources) {
      const path = join(REPO, src);
      expect([src, existsSync(path)]).toEqual([src, true]);
      const files = statSync(path).isDirectory() ? filesUnder(path).map((f) => relative(REPO, f)) : [src];
      for (const f of files) expect([f, included(f)]).toEqual([f, true]);
    }
    expect(included('node_modules/x/index.js')).toBe(false);
    expect(included('test/unit/a.test.ts')).toBe(false);
    expect(included('dist/src/cli/main.js')).toBe(false);
  });

  test('the build tsconfig compiles the service sources and nothing else', () => {
    const r = spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'deploy/tsconfig.build.json', '--listFilesOnly'], {
      cwd: REPO,
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    const own = r.stdout
      .split('\n')
      .filter((l) => l && !l.includes('/node_modules/'))
      .map((l) => relative(REPO, l));
    expect(own).toContain('src/cli/main.ts');
    expect(own.filter((f) => !f.startsWith('src/'))).toEqual([]);
  });

  test('the compiled service imports only production dependencies', () => {
    const prod = productionPackages();
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; scripts: Record<string, string> };
    const bad: string[] = [];
    for (const file of jsFiles(join(REPO, 'dist', 'src'))) {
      const text = readFileSync(file, 'utf8');
      const specs = [
        ...text.matchAll(/^\s*(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm),
        ...text.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
        ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
      ].map((m) => m[1]!);
      for (const spec of specs) {
        if (spec.startsWith('.') || spec.startsWith('node:')) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!prod.has(name) || !(name in pkg.dependencies)) bad.push(`${relative(REPO, file)} imports ${name}, which is not a production dependency`);
      }
    }
    expect(bad).toEqual([]);
    expect(pkg.scripts.start).toBe('node bin/aszcol.js');
  });

  test('the image layout runs: production node_modules only, the shipped configuration on loopback ports, HEALTHCHECK passes, SIGTERM exits 0', async () => {
    // The runtime stage's file system, assembled the way its COPY lines say.
    const image = tempDir('aszcol-image-');
    const app = join(image, 'app');
    mkdirSync(join(app, 'node_modules', '@grpc'), { recursive: true });
    cpSync(join(REPO, 'dist', 'src'), join(app, 'dist', 'src'), { recursive: true });
    cpSync(join(REPO, 'bin'), join(app, 'bin'), { recursive: true });
    cpSync(join(REPO, 'proto'), join(app, 'proto'), { recursive: true });
    cpSync(join(REPO, 'package.json'), join(app, 'package.json'));
    for (const name of productionPackages()) {
      mkdirSync(dirname(join(app, 'node_modules', name)), { recursive: true });
      symlinkSync(join(REPO, 'node_modules', name), join(app, 'node_modules', name), 'dir');
    }
    expect(existsSync(join(app, 'node_modules', 'typescript'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'jest'))).toBe(false);

    // The shipped configuration, with the container's every-interface listeners moved to free loopback ports.
    const [health, metrics, grpc, http, view] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    const storage = join(image, 'var', 'lib', 'aszcol');
    const claude = join(image, 'claude');
    mkdirSync(join(claude, 'projects'), { recursive: true });
    const cfgText = readFileSync(join(REPO, 'deploy', 'aszcol.container.yaml'), 'utf8')
      .replace('root: /var/lib/aszcol', `root: ${storage}`)
      .replace('0.0.0.0:13133', `127.0.0.1:${health}`)
      .replace('0.0.0.0:8888', `127.0.0.1:${metrics}`)
      .replace('0.0.0.0:4317', `127.0.0.1:${grpc}`)
      .replace('0.0.0.0:4318', `127.0.0.1:${http}`)
      .replace('0.0.0.0:8787', `127.0.0.1:${view}`);
    expect(cfgText).not.toContain('0.0.0.0');
    const cfgPath = join(image, 'aszcol.yaml');
    writeFileSync(cfgPath, cfgText);
    mkdirSync(storage, { recursive: true });

    const imageBin = join(app, 'bin', 'aszcol.js');
    const child = spawn(process.execPath, [imageBin, '--config', cfgPath], {
      cwd: storage,
      env: { ...process.env, NODE_ENV: 'production', CLAUDE_CONFIG_DIR: claude },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number>((res) => child.on('close', (code) => res(code ?? 1)));
    try {
      expect((await pollHttp(`http://127.0.0.1:${health}/`, (s) => s === 200, 150)).status).toBe(200);
      expect(stderr).toMatch(/"msg":"service started"/);
      const hc = execArgs(stepsOf(dockerStages().at(-1)!, 'HEALTHCHECK')[0]!.args).map((a) => a.replace('127.0.0.1:13133', `127.0.0.1:${health}`));
      const probe = spawnSync(hc[0] === 'node' ? process.execPath : hc[0]!, hc.slice(1), { encoding: 'utf8', timeout: 10_000 });
      expect(probe.status).toBe(0);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(locksUnder(storage)).toEqual([]);
    // With the service gone the same HEALTHCHECK fails.
    const hc = execArgs(stepsOf(dockerStages().at(-1)!, 'HEALTHCHECK')[0]!.args).map((a) => a.replace('127.0.0.1:13133', `127.0.0.1:${health}`));
    expect(spawnSync(process.execPath, hc.slice(1), { timeout: 10_000 }).status).toBe(1);
  });
});

/** Every file under a directory. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}
