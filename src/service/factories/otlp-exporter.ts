import type { ComponentFactory } from '../component.js';

/**
 * Registration point for the `otlp` exporter (its code belongs in src/exporters/otlp/).
 * Until this exports a factory, a configuration naming `otlp` is refused at validation as
 * not available in this build, and the embedded default leaves it out.
 *
 * To register: `export const otlpExporterFactory: ComponentFactory<YourConfig> = { kind: 'exporter', type: 'otlp', … }`.
 */
export const otlpExporterFactory: ComponentFactory<any> | undefined = undefined;
