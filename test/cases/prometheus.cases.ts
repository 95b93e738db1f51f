import type { ApiCases } from './types';
import { commonCreateCases, transitionCases } from './builders';

export default {
  api: 'prometheus',
  create: [
    ...commonCreateCases({ service: 'a9s-prometheus', plan: 'prometheus-single-small' }, { name: 'mappingStrictMatch', wrongType: 'yes' }),
    {
      name: 'every parameter',
      reason: 'all parameters',
      spec: {
        service: 'a9s-prometheus',
        plan: 'prometheus2-grafana10-single-big',
        parameters: { mappingStrictMatch: false, scrapeConfigs: [{ job_name: 'app', static_configs: [{ targets: ['app:9090'] }] }] },
      },
      valid: true,
    },
    {
      name: 'scrape config without job',
      reason: 'a scrape config names its job',
      spec: { service: 'a9s-prometheus', plan: 'promgraf2-single-small', parameters: { scrapeConfigs: [{ static_configs: [] }] } },
      valid: false,
      error: 'job_name',
    },
  ],
  update: transitionCases({
    service: 'a9s-prometheus',
    small: 'prometheus-single-small',
    big: 'prometheus-single-big',
    planImmutable: true,
  }),
} satisfies ApiCases;
