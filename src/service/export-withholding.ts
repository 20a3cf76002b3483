/**
 * What an `otlp` exporter withholds when its configuration does not say: the view's `hide`. A
 * deployment that keeps a category from the people reading its own page does not mean to send it
 * to a shared backend either, so the export inherits it; `hide: []` on the exporter sends
 * everything. With several view extensions, the union of their lists.
 */
import type { OtlpExporterConfig } from '../exporters/otlp/config.js';
import type { ViewConfig } from '../extensions/view/config.js';
import { WITHHOLD_CATEGORIES } from '../formats/view/withhold.js';

/** What this needs of a configured component (service/config.ts's ComponentConfig, which calls this). */
interface Configured {
  kind: string;
  type: string;
  path: string;
  config: unknown;
}

export function inheritExportWithholding<T extends Configured>(components: T[]): T[] {
  const views = components.filter((c) => c.kind === 'extension' && c.type === 'view' && (c.config as ViewConfig).hide?.length);
  if (!views.length) return components;
  const hidden = new Set(views.flatMap((v) => (v.config as ViewConfig).hide ?? []));
  const hide = WITHHOLD_CATEGORIES.filter((c) => hidden.has(c));
  const hideFrom = views.map((v) => v.path).join(', ');
  return components.map((c) => {
    if (c.kind !== 'exporter' || c.type !== 'otlp' || (c.config as OtlpExporterConfig).hide !== undefined) return c;
    return { ...c, config: { ...(c.config as OtlpExporterConfig), hide, hideFrom } satisfies OtlpExporterConfig };
  });
}
