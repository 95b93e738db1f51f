/**
 * Prometheus (optionally with Grafana) on a9s. Its plans cannot change after creation. Parameters, schemas and keys as
 * in Klutch's XRD and Composition (v1.5.0).
 */
import { DataService, type Plan, s } from '..';

const plans: Plan[] = ['prometheus', 'promgraf2', 'prometheus2-grafana10'].flatMap((family) =>
  (['small', 'big'] as const).map((size) => ({ name: `${family}-single-${size}`, topology: 'single' as const, size, ssl: false })),
);

export default new DataService({
  name: 'prometheus',
  kind: 'PrometheusInstance',
  description: 'A Prometheus instance.',
  defaultBackend: 'a9s',
  sizes: ['small', 'big'],
  a9s: { services: ['a9s-prometheus'], plans },
  planImmutable: true,
  parameters: [
    { name: 'mappingStrictMatch', schema: s.boolean(), keys: { a9s: 'mapping_strict_match' } },
    {
      name: 'scrapeConfigs',
      // Prometheus' own scrape_config documents, passed through as they are.
      schema: s.array(s.freeform()),
      keys: { a9s: 'scrape_configs' },
    },
  ],
  exampleParameters: { mappingStrictMatch: true },
});
