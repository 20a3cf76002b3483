import express, { type NextFunction, type Request, type Response } from 'express';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { FIELDS, GLOSSARY_DIALECT, TERMS } from '../../adapters/claude-code/glossary.js';
import { formatEndpoint, parseEndpoint } from '../../config/reader.js';
import { ViewUnavailable } from './load.js';
import { closeServer, listen } from '../../component/http.js';
import { STYLE_CSS } from './assets.js';
import { pageHtml } from './page-html.js';
import { ViewCatalog, type ViewStatus } from './catalog.js';
import { defaultRowFactsDir, RowFactsStore } from './row-facts-store.js';
import { emptyRootGuide } from './empty-root.js';
import type { ServiceDescription } from '../../component/component.js';
import { callsAnswer, toolsAnswer } from './figures-api.js';
import { callPrompt } from './prompts.js';
import { withExecutions } from './executions.js';
import type { ViewConfig } from './config.js';
import type { ViewDocument } from '../../formats/view/types.js';
import type { Registry } from 'prom-client';
import { UsageParamError, UsageSource } from './usage-api.js';
import { WithheldAnswers } from './withheld-api.js';
import { StatusWaits } from './status-wait.js';

export { defaultViewConfig, validateViewConfig, type ViewConfig } from './config.js';

export interface ViewContext {
  storageRoot: string;
  /** Inside the service: what it receives and exports (the status and the empty page say so). */
  describeService?: () => ServiceDescription | undefined;
  log?: (level: string, msg: string, fields?: object) => void;
  /** Inside the service: where the `aszcol_usage_*` gauges go. */
  registry?: Registry;
  /** Inside the service: `afterPass` is called once a pass has parsed, so waiting pages are answered then, not on a timer. */
  passes?: boolean;
}

/** `aszcol view` on its own: how often a waiting page's generation is looked at. */
const STANDALONE_RECHECK_MS = 1000;

/** The page's scripts: compiled from ./page/*.ts beside this module. */
const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
const SCRIPT = /^[a-z][a-z0-9-]*\.js$/;

/** Nothing but this server: no CDN, no font host, no third-party anything. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The `view` extension: the list of conversations and one conversation as a console, with the
 * JSON API the page reads. It only reads the storage root: it folds a chain when asked, keeps
 * the document until the head round moves, and reads a landed record from disk every time.
 */
export class ViewExtension {
  private server: Server | undefined;
  private bound = '';
  private cacheProblemSaid = false;
  readonly catalog: ViewCatalog;
  readonly usage: UsageSource;
  private readonly withheld: WithheldAnswers;
  private readonly waits: StatusWaits;

  constructor(
    private readonly cfg: ViewConfig,
    private readonly ctx: ViewContext,
  ) {
    const cache = cfg.cacheDir === undefined || cfg.cacheDir === 'off' ? undefined : cfg.cacheDir || defaultRowFactsDir(ctx.storageRoot);
    this.catalog = new ViewCatalog(ctx.storageRoot, Date.now, cache ? new RowFactsStore(cache) : undefined);
    this.usage = new UsageSource(ctx.storageRoot, () => this.catalog.status().generation);
    if (ctx.registry) this.usage.registerMetrics(ctx.registry);
    this.withheld = new WithheldAnswers(cfg.hide ?? []);
    this.waits = new StatusWaits(() => this.catalog.status().generation, ctx.passes ? undefined : STANDALONE_RECHECK_MS);
  }

  /** A pass has landed and parsed: pages waiting on `/api/status` learn of a moved head now. */
  afterPass(): void {
    this.waits.look();
  }

  /** The catalog's status; inside the service also what the service does, with a hint that fits. */
  status(): ViewStatus {
    const base = this.catalog.status();
    const service = this.ctx.describeService?.();
    if (!service) return base;
    const { hint: _viewHint, ...rest } = base;
    return { ...rest, mode: 'service', service, ...(base.conversations === 0 ? { hint: emptyRootGuide(base.root, service).hint } : {}) };
  }

  app(): express.Express {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.use((req: Request, res: Response, next: NextFunction) => {
      res.set({ 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' });
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.status(405).set('Allow', 'GET, HEAD').json({ error: 'this server only reads: GET and HEAD' });
        return;
      }
      next();
    });
    const html = pageHtml();
    const page = (_req: Request, res: Response) => {
      res.type('html').set('Cache-Control', 'no-cache').send(html);
    };
    app.get('/', page);
    app.get('/usage', page);
    app.get('/c/:id', (req, res) => {
      if (!this.catalog.exists(String(req.params.id))) res.status(404);
      page(req, res);
    });
    app.get('/assets/style.css', (_req, res) => {
      res.type('css').set('Cache-Control', 'no-cache').send(STYLE_CSS);
    });
    app.get('/assets/:name', (req, res) => {
      const name = String(req.params.name);
      if (!SCRIPT.test(name) || !existsSync(PAGE_DIR + name)) {
        res.status(404).type('text').send('not found');
        return;
      }
      res
        .type('application/javascript')
        .set('Cache-Control', 'no-cache')
        .sendFile(PAGE_DIR + name);
    });

    const api = express.Router();
    api.use((_req, res, next) => {
      res.set('Cache-Control', 'no-store');
      next();
    });
    api.get('/status', (req, res, next) => {
      const after = req.query.after;
      if (after === undefined) {
        res.json(this.status());
        return;
      }
      if (typeof after !== 'string' || !/^\d{1,15}$/.test(after)) {
        res.status(400).json({ error: `after=${JSON.stringify(after)}: a generation is a whole number, as /api/status gave it` });
        return;
      }
      // Answered once the generation moves past the page's, or with it unchanged after a bounded wait.
      const w = this.waits.wait(Number(after));
      res.on('close', w.cancel);
      w.done.then(() => {
        if (!res.writableEnded && !res.destroyed) res.json(this.status());
      }, next);
    });
    api.get('/conversations', (_req, res) => {
      const rows = this.withheld.rows(this.catalog.rows());
      const cacheProblem = this.catalog.cacheProblem();
      if (cacheProblem && !this.cacheProblemSaid) {
        this.cacheProblemSaid = true;
        this.ctx.log?.('warn', cacheProblem);
      }
      res.json({ conversations: rows, ...(rows.length ? {} : emptyRootGuide(this.catalog.root, this.ctx.describeService?.())) });
    });
    api.get('/c/:id/view', (req, res) => {
      const v = this.catalog.view(String(req.params.id));
      if (!v.cached) this.ctx.log?.('debug', 'view built', { conversation: req.params.id, ms: Math.round(v.builtMs), bytes: v.json.length });
      res.type('application/json').send(this.withheld.documentJson(v.json));
    });
    api.get('/c/:id/calls', (req, res) => {
      res.json(callsAnswer(this.withheld.document(this.catalog.view(String(req.params.id)).json)));
    });
    api.get('/c/:id/calls/:message/prompt', (req, res) => {
      const prompt = callPrompt(this.catalog.root, JSON.parse(this.catalog.view(String(req.params.id)).json) as ViewDocument, String(req.params.message));
      if (!prompt) res.status(404).json({ error: `conversation ${String(req.params.id)} has no provider call ${String(req.params.message)}` });
      else res.json(this.withheld.prompt(prompt));
    });
    api.get('/c/:id/tools', (req, res) => {
      const doc = this.withheld.document(this.catalog.view(String(req.params.id)).json);
      res.json(withExecutions(toolsAnswer(doc), this.ctx.storageRoot, doc.sessions));
    });
    api.get('/c/:id/changes', (req, res) => {
      res.json(this.withheld.changes(this.catalog.changes(String(req.params.id))));
    });
    api.get('/c/:id/record/:seq/:row', (req, res) => {
      res.json(this.withheld.record(this.catalog.record(String(req.params.id), String(req.params.seq), String(req.params.row))));
    });
    api.get('/usage', (req, res) => {
      res.json(this.usage.answer(req.query as Record<string, unknown>));
    });
    api.get('/glossary', (_req, res) => {
      res.json({ dialect: GLOSSARY_DIALECT, terms: TERMS, fields: FIELDS });
    });
    api.use((req, res) => {
      res.status(404).json({ error: `no such API path: ${req.path}` });
    });
    app.use('/api', api);
    app.use((_req, res) => {
      res.status(404).type('text').send('not found');
    });
    app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
      // Express's own refusals (a malformed percent-encoding in a path, say) carry their 4xx status.
      const status = (err as { status?: unknown } | undefined)?.status;
      if (typeof status === 'number' && status >= 400 && status < 500) {
        res.status(status).json({ error: (err as Error).message });
        return;
      }
      if (err instanceof UsageParamError) {
        res.status(400).json({ error: err.message });
        return;
      }
      if (err instanceof ViewUnavailable) {
        res.status(err.status).json({ error: err.message, ...(err.problems.length ? { problems: err.problems } : {}) });
        return;
      }
      this.ctx.log?.('error', 'view request failed', { path: req.path, error: (err as Error)?.message ?? String(err) });
      res.status(500).json({ error: (err as Error)?.message ?? String(err) });
    });
    return app;
  }

  async start(): Promise<void> {
    const ep = parseEndpoint(this.cfg.endpoint, 'extensions.view.endpoint');
    this.server = await listen(this.app(), ep.host, ep.port, { allowedHosts: this.cfg.allowedHosts, configPath: 'extensions.view.allowed_hosts' });
    const a = this.server.address() as AddressInfo;
    this.bound = formatEndpoint({ host: a.address, port: a.port });
    this.ctx.log?.('info', 'view serving', { endpoint: this.bound, root: this.ctx.storageRoot });
  }

  /** The address it listens on, `host:port`, once started. */
  address(): string {
    return this.bound;
  }

  addresses(): Record<string, string> {
    return { endpoint: this.bound };
  }

  async shutdown(): Promise<void> {
    this.waits.close();
    await closeServer(this.server);
    this.server = undefined;
  }
}
