/**
 * One sync for a whole filesystem, `syncfs(2)`, for a batch of landed files that would otherwise take
 * an fsync each (issue 19: about seven per session, a fifth of a first collect). Node has no binding
 * for it, so coreutils' `sync --file-system PATH` runs once per sync. It is started by one small
 * shell kept for the owner's life: a fork of the collector itself (a Node process of 150 MB and
 * more) cost about 27 ms per child on the 2-core VM, the shell's a millisecond or two. Where the
 * command is missing or fails, the owner syncs file by file from then on, and the reason is kept
 * for it to say once.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { statSync } from 'node:fs';

/** How a collector makes a batch durable: one sync of the filesystem, or an fsync per file and directory. */
export type DurabilityMode = 'filesystem' | 'files';

export const DURABILITY_MODES: readonly DurabilityMode[] = ['filesystem', 'files'];

/** The command before the path (tests point it at a failing stand-in). */
export const COREUTILS_SYNCFS: readonly string[] = ['sync', '--file-system'];

/** What the shell prints after each command, with the command's exit status. */
const DONE = '__aszcol_sync_done';

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A shell that runs one sync command per line it is given and answers each with its status. */
class SyncShell {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = '';
  private err = '';
  private waiting: ((status: number | string) => void)[] = [];
  private gone: string | undefined;

  constructor() {
    this.child = spawn('/bin/sh', [], { stdio: ['pipe', 'pipe', 'pipe'] });
    // Neither the shell nor its pipes keep the owner's thread alive; the shell ends when its input closes.
    this.child.unref();
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) (s as unknown as { unref?: () => void }).unref?.();
    this.child.stdout.setEncoding('utf8').on('data', (d: string) => this.answered(d));
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => (this.err += d));
    this.child.stdin.on('error', () => this.end('its input closed'));
    this.child.on('error', (e) => this.end(e.message));
    this.child.on('exit', (code, signal) => this.end(`it exited (${signal ?? code})`));
  }

  /** Runs `argv` (quoted for the shell); resolves to its exit status, or to why the shell could not run it. */
  run(argv: readonly string[]): Promise<{ status: number | string; stderr: string }> {
    if (this.gone) return Promise.resolve({ status: `the shell that runs \`sync\` is gone: ${this.gone}`, stderr: '' });
    return new Promise((resolve) => {
      this.waiting.push((status) => {
        const stderr = this.err;
        this.err = '';
        resolve({ status, stderr });
      });
      // The command's messages go down the same pipe as the status line, so they are read before it (two pipes race).
      this.child.stdin.write(`${argv.map(shellQuote).join(' ')} </dev/null 2>&1; echo "${DONE} $?"\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }

  private answered(d: string): void {
    this.out += d;
    for (let nl = this.out.indexOf('\n'); nl >= 0; nl = this.out.indexOf('\n')) {
      const line = this.out.slice(0, nl);
      this.out = this.out.slice(nl + 1);
      if (line.startsWith(DONE)) this.waiting.shift()?.(Number(line.slice(DONE.length + 1)));
      else this.err += `${line}\n`;
    }
  }

  private end(why: string): void {
    this.gone ??= why;
    for (const w of this.waiting.splice(0)) w(`the shell that runs \`sync\` is gone: ${why}`);
  }
}

/**
 * A storage root's filesystem, synced whole. Lives as long as its owner (a collect worker), so a
 * failure is learned once: after it, `usable` is false and `takeNote` says why, once.
 */
export class FilesystemSync {
  private failed: string | undefined;
  private said = false;
  private device: number | undefined;
  private probe: Promise<boolean> | undefined;
  private shell: SyncShell | undefined;
  /** Syncs one after another: a second request waits for the first's answer. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly root: string,
    private readonly command: readonly string[] = COREUTILS_SYNCFS,
  ) {}

  get usable(): boolean {
    return this.failed === undefined;
  }

  /** Why syncs went file by file, the first time it is asked after the fallback; undefined otherwise. */
  takeNote(): string | undefined {
    if (this.failed === undefined || this.said) return undefined;
    this.said = true;
    return `batch_sync: syncing file by file from now on: ${this.failed}`;
  }

  /** Whether every directory named is on the root's filesystem (a mount inside the root is not covered by its syncfs). */
  covers(dirs: Iterable<string>): boolean {
    try {
      this.device ??= statSync(this.root).dev;
      for (const d of dirs) if (statSync(d).dev !== this.device) return false;
      return true;
    } catch {
      return false; // a directory that cannot be looked at is synced the long way, which says what is wrong
    }
  }

  /**
   * Whether the command works here, tried once before the first batch relies on it: a missing
   * command or an option this `sync` does not know turns the owner to file by file from the start.
   */
  ready(): Promise<boolean> {
    this.probe ??= this.sync();
    return this.probe;
  }

  /** Syncs the filesystem; false (and file by file from now on) when the command is missing or fails. */
  sync(): Promise<boolean> {
    const next = this.queue.then(() => this.syncNow());
    this.queue = next;
    return next;
  }

  /** Ends the shell (the owner's last batch is durable). */
  close(): void {
    this.shell?.close();
    this.shell = undefined;
  }

  private async syncNow(): Promise<boolean> {
    if (this.failed !== undefined) return false;
    this.shell ??= new SyncShell();
    const argv = [...this.command, this.root];
    const { status, stderr } = await this.shell.run(argv);
    if (status === 0) return true;
    const said = stderr.trim().split('\n')[0];
    this.failed =
      typeof status === 'string'
        ? status
        : status === 127
          ? `\`${argv[0]}\` was not found`
          : `\`${argv.join(' ')}\` failed (${status}): ${said || 'no message'}`;
    this.close();
    return false;
  }
}
