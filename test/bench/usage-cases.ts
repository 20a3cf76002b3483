/**
 * `npm run usage:cases`: the README's table of where ccusage goes wrong. Builds the lab cases
 * (`test/helpers/usage-cases.ts`), then reads the same config directory with ccusage 18.0.11
 * (`session --json --offline`, and `session --id` for #994) and the same sources with
 * `aszcol usage session --json`, and prints, per case, the lab's truth beside both (output and
 * total tokens: where the cases differ), as JSON and as a Markdown table (bench-out/usage-cases.json).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { UsageAnswer } from '../../src/assemble/usage/answer.js';
import { BIN, writeConfig } from '../helpers/cli.js';
import { buildUsageLab, truthOf } from '../helpers/usage-cases.js';

const CCUSAGE = join(process.cwd(), 'node_modules', '.bin', 'ccusage');

interface CcSession {
  sessionId: string;
  outputTokens: number;
  totalTokens: number;
}

const projectDirName = (cwd: string) => cwd.replace(/[^A-Za-z0-9-]/g, '-');

function ccusage(home: string, args: string[]): { sessions: CcSession[]; totals?: { outputTokens: number; totalTokens: number } } {
  const out = execFileSync(CCUSAGE, [...args, '--json', '--offline'], { env: { ...process.env, CLAUDE_CONFIG_DIR: home }, encoding: 'utf8' });
  return JSON.parse(out) as { sessions: CcSession[] };
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'aszcol-usage-cases-'));
  try {
    const lab = await buildUsageLab(base);
    const root = join(base, 'data');
    const config = writeConfig(base, root, join(lab.home, 'projects'));
    const ours = JSON.parse(
      execFileSync(process.execPath, [BIN, 'usage', 'session', '--json', '--timezone', 'UTC', '--config', config], { encoding: 'utf8' }),
    ) as UsageAnswer;
    const theirs = ccusage(lab.home, ['session']);
    const rows = lab.cases.map((c) => {
      const truth = truthOf(c.requests);
      const total = truth.input + truth.output + truth.cache_read + truth.cache_write;
      const cc = theirs.sessions.find((s) => s.sessionId === projectDirName(c.cwd) || s.sessionId === basename(c.cwd));
      const mine = ours.rows.filter((r) => c.sessions.includes(r.key));
      return {
        case: c.name,
        issue: c.issue,
        truth: { output: truth.output, total },
        ccusage: cc ? { output: cc.outputTokens, total: cc.totalTokens } : undefined,
        aszcol: { output: mine.reduce((n, r) => n + r.output_tokens, 0), total: mine.reduce((n, r) => n + r.total_tokens, 0) },
      };
    });
    // #994: one session asked for by id.
    const multi = lab.cases.find((c) => c.issue === '#389')!;
    const byId = ccusage(lab.home, ['session', '--id', multi.session]) as unknown as { totalTokens?: number; entries?: { outputTokens?: number }[] };
    const oursById = JSON.parse(
      execFileSync(process.execPath, [BIN, 'usage', 'session', '--id', multi.session, '--json', '--no-collect', '--timezone', 'UTC', '--config', config], {
        encoding: 'utf8',
      }),
    ) as UsageAnswer;
    const t = truthOf(multi.requests);
    rows.push({
      case: 'one session by id (`session --id`)',
      issue: '#994',
      truth: { output: t.output, total: t.input + t.output + t.cache_read + t.cache_write },
      ccusage: { output: (byId.entries ?? []).reduce((n, e) => n + (e.outputTokens ?? 0), 0), total: byId.totalTokens ?? NaN },
      aszcol: { output: oursById.totals.output_tokens, total: oursById.totals.total_tokens },
    });
    const cell = (x?: { output: number; total: number }) => (x ? `${x.output} / ${x.total}` : 'no row');
    const md = [
      '| case | ccusage issue | lab truth (output / total tokens) | ccusage 18.0.11 | aszcol |',
      '| --- | --- | --- | --- | --- |',
      ...rows.map((r) => `| ${r.case} | ${r.issue} | ${cell(r.truth)} | ${cell(r.ccusage)} | ${cell(r.aszcol)} |`),
    ].join('\n');
    mkdirSync('bench-out', { recursive: true });
    writeFileSync(join('bench-out', 'usage-cases.json'), JSON.stringify({ rows, ccusage_by_id_raw: byId }, null, 2));
    process.stdout.write(JSON.stringify({ rows }) + '\n' + md + '\n');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
