import type { ComponentFactory, ComponentKind, PipelineType } from './component.js';

/**
 * One component type aszcol knows, with the pipelines it may appear in. A type whose factory is
 * not registered (yet) is known by name, so a configuration naming it gets "not available in
 * this build" instead of "unknown type". The service's registry is a list of these; configuration
 * loading is handed that list and never imports it.
 */
export interface KnownType {
  kind: ComponentKind;
  type: string;
  /** Pipeline types it may appear in; empty for extensions. */
  pipelines: readonly PipelineType[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one table holds every type's factory; each checks its own config in validate()
  factory: ComponentFactory<any> | undefined;
}

export type Registry = readonly KnownType[];

export function findType(registry: Registry, kind: ComponentKind, type: string): KnownType | undefined {
  return registry.find((t) => t.kind === kind && t.type === type);
}

export function available(registry: Registry, kind: ComponentKind, type: string): boolean {
  return findType(registry, kind, type)?.factory !== undefined;
}
