import type { ComponentFactory } from '../component.js';

/**
 * Registration point for the `prometheus` exporter (its code belongs in src/exporters/prometheus/).
 * Until this exports a factory, a configuration naming `prometheus` is refused at validation as
 * not available in this build, and the embedded default leaves it out.
 *
 * To register: `export const prometheusExporterFactory: ComponentFactory<YourConfig> = { kind: 'exporter', type: 'prometheus', … }`.
 */
export const prometheusExporterFactory: ComponentFactory<any> | undefined = undefined;
