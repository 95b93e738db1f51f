// Preloaded (`node --require`) into a program the tests run on the host that is handed addresses inside a node's
// network namespace (kubectl bind, given a provider kubeconfig naming the control plane's external address as the app
// cluster's Pods reach it). $KLUTCH_KIT_HOST_ROUTES maps `host:port` to the loopback port that reaches the same server;
// every other TCP connection must go to loopback, so nothing leaves the machine whatever address a program is given.
'use strict';
const net = require('node:net');
const tls = require('node:tls');

const routes = JSON.parse(process.env.KLUTCH_KIT_HOST_ROUTES || '{}');
const loopback = (h) => h === undefined || h === 'localhost' || /^127\./.test(h) || h === '::1';

function route(options) {
  if (!options || typeof options !== 'object' || options.path) return options;
  const host = options.host ?? options.hostname;
  const to = routes[`${host}:${options.port}`];
  if (to !== undefined) return { ...options, host: '127.0.0.1', hostname: '127.0.0.1', port: to, servername: options.servername || host };
  if (!loopback(host))
    throw new Error(`host-routes: refusing a connection to ${host}:${options.port}: only loopback is reachable from the host`);
  return options;
}

for (const [mod, name] of [
  [net, 'connect'],
  [net, 'createConnection'],
  [tls, 'connect'],
]) {
  const original = mod[name];
  mod[name] = function routed(...args) {
    if (args[0] && typeof args[0] === 'object') args[0] = route(args[0]);
    else if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
      const port = args[0];
      const host = typeof args[1] === 'string' ? args[1] : undefined;
      const r = route({ port, host });
      args = [r, ...args.slice(host === undefined ? 1 : 2)];
    }
    return original.apply(this, args);
  };
}
