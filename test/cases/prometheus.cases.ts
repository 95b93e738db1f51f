import type { ApiCases } from './types';
import { commonCreateCases, transitionCases } from './builders';
import { klutchEnums, servicePlanClaims } from './klutch';

export default {
  api: 'prometheus',
  create: [
    ...commonCreateCases({ service: 'a9s-prometheus', plan: 'prometheus-single-small' }, { name: 'mappingStrictMatch', wrongType: 'yes' }),
    {
      name: 'every parameter',
      reason: 'all parameters',
      spec: {
        acceptsIncomplete: false,
        service: 'a9s-prometheus',
        plan: 'prometheus2-grafana10-single-big',
        parameters: { mappingStrictMatch: false, scrapeConfigs: [{ job_name: 'app', static_configs: [{ targets: ['app:9090'] }] }] },
      },
      valid: true,
    },
    {
      name: 'scrape config as Klutch takes it',
      reason: 'Klutch passes scrape configs through unchecked',
      spec: { service: 'a9s-prometheus', plan: 'promgraf2-single-small', parameters: { scrapeConfigs: [{ static_configs: [] }] } },
      valid: true,
    },
    {
      name: 'scrape config not an object',
      reason: 'scrape configs are objects',
      spec: { service: 'a9s-prometheus', plan: 'promgraf2-single-small', parameters: { scrapeConfigs: ['app:9090'] } },
      valid: false,
      error: 'scrapeConfigs',
    },
    ...servicePlanClaims(klutchEnums('a9s/prometheus/definition.yaml')),
  ],
  update: transitionCases({
    service: 'a9s-prometheus',
    small: 'prometheus-single-small',
    big: 'prometheus-single-big',
    planImmutable: true,
  }),
} satisfies ApiCases;
