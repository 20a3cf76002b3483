/**
 * Import layering for src/ (run by `npm run lint`). Imports run one way:
 *   cli -> scenario -> service -> components (receivers, processors, exporters, extensions)
 *       -> the floors (assemble, storage, adapters, formats, component, config, otlp, util).
 * Type-only imports count (tsPreCompilationDeps): a type that points upward is still a design loop.
 */
const UPPER = '^src/(receivers|processors|exporters|extensions|service|scenario|cli)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes load order matter and two modules one concept; break it by moving the shared piece down a layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'floors-not-upward',
      severity: 'error',
      comment: 'The floors are the shared libraries every component builds on; reaching up into a component, the service or the CLI would tie them to one use.',
      from: { path: '^src/(util|config|otlp|formats|adapters|storage|component|assemble)/' },
      to: { path: UPPER },
    },
    {
      name: 'util-only-util',
      severity: 'error',
      comment: 'util is the bottom floor: small helpers with no project knowledge, so anything may use them.',
      from: { path: '^src/util/' },
      to: { path: '^src/', pathNot: '^src/util/' },
    },
    {
      name: 'config-only-config-util',
      severity: 'error',
      comment: 'config reads YAML and environment values; it knows no component or format, each of which validates its own section with it.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(config|util)/' },
    },
    {
      name: 'otlp-only-otlp-util',
      severity: 'error',
      comment: 'otlp is the wire protocol (encode, decode, identity); it must stay usable by any receiver or exporter without dragging storage or formats along.',
      from: { path: '^src/otlp/' },
      to: { path: '^src/', pathNot: '^src/(otlp|util)/' },
    },
    {
      name: 'formats-only-formats-util',
      severity: 'error',
      comment: 'formats are the on-disk and view data shapes, pure encode/decode; storage and the view build on them, never the reverse.',
      from: { path: '^src/formats/' },
      to: { path: '^src/', pathNot: '^src/(formats|util)/' },
    },
    {
      name: 'formats-no-fs',
      severity: 'error',
      comment: 'formats are pure (text in, values out) so they can run in a worker or the browser; file reading belongs in storage.',
      from: { path: '^src/formats/' },
      to: { dependencyTypes: ['core'], path: '^(node:)?fs(/promises)?$' },
    },
    {
      name: 'component-contract-only-component-config-util',
      severity: 'error',
      comment: 'src/component is the contract every component implements; it must not know any storage, format or protocol detail.',
      from: { path: '^src/component/' },
      to: { path: '^src/', pathNot: '^src/(component|config|util)/' },
    },
    {
      name: 'component-not-another-component',
      severity: 'error',
      comment: 'Components meet only through the service pipelines; one importing another would hide a coupling the configuration cannot see. Shared code goes down a floor.',
      from: { path: '^src/(receivers|processors|exporters|extensions)/([^/]+)/' },
      to: { path: '^src/(receivers|processors|exporters|extensions)/', pathNot: '^src/$1/$2/' },
    },
    {
      name: 'component-not-service-scenario-cli',
      severity: 'error',
      comment: 'The service builds and drives components; a component reaching back into it (or the scenario tooling or CLI) would close a loop.',
      from: { path: '^src/(receivers|processors|exporters|extensions)/' },
      to: { path: '^src/(service|scenario|cli)/' },
    },
    {
      name: 'service-not-scenario-cli',
      severity: 'error',
      comment: 'The service runs with or without the CLI; scenarios and commands sit on top of it.',
      from: { path: '^src/service/' },
      to: { path: '^src/(scenario|cli)/' },
    },
    {
      name: 'scenario-not-cli',
      severity: 'error',
      comment: 'Scenarios are driven by the CLI and by tests; the CLI is only their front end.',
      from: { path: '^src/scenario/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'no-orphans',
      severity: 'warn',
      comment: 'A module nothing imports is dead code, unless it is an entry: worker threads are loaded by URL and the view page is served to the browser.',
      from: {
        orphan: true,
        pathNot: [
          '(^|/)[.][^/]+[.](?:js|cjs|mjs|ts|cts|mts|json)$',
          '[.]d[.]ts$',
          '(^|/)tsconfig[.]json$',
          '^src/cli/main\\.ts$',
          '(session|parse|land|read|scenario-push)-worker\\.ts$',
          '^src/extensions/view/page/',
        ],
      },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
