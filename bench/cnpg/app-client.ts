/**
 * The app cluster's side of bench/cnpg: a Pod in the app cluster (the PostgreSQL image, whose psql and pg_isready
 * are Debian's) from which each claim's database is reached at the address its `<binding>-creds` names, as an app's
 * Pod reaches it: through the app node's network, over the route to the control plane's load balancer addresses.
 *
 * The Pod runs before the claims, and each probe is one `kubectl exec` whose loop runs inside the Pod and prints a line
 * the moment PostgreSQL accepts connections (pg_isready) and the moment a query with the binding's credentials is
 * answered; the bench timestamps the lines as they stream in. A Pod started per claim would add its own start to the
 * time, and an exec per attempt its round trip through two API servers and the kubelet.
 */
import { Writable } from 'node:stream';
import { Exec, type V1Status } from '@kubernetes/client-node';
import { eventually, getObject, requireOk, type Kube } from '../../harness/cluster/kube';
import { CNPG_POSTGRESQL_IMAGE, POSTGRESQL_BIN } from '../../harness/node/cnpg-images';

const CONTAINER = 'client';
/** Attempts are 0.1 s apart plus their own time; the loops give up after this many (the bench's deadline is shorter). */
const MAX_ATTEMPTS = 6_000;

/** The keys of `<binding>-creds` (Klutch's a8s binding keys), decoded. */
export interface Creds {
  readonly instance_service: string;
  readonly database: string;
  readonly username: string;
  readonly password: string;
}

export interface ProbeResult {
  /** performance.now() when pg_isready first reported the server accepting connections. */
  readonly acceptingAt: number;
  /** performance.now() when `SELECT 1` with the credentials was first answered. */
  readonly answeredAt: number;
}

export interface AppClient {
  /** Probes the database `creds` name from the Pod until a query is answered; `abort` ends the exec. */
  probe(creds: Creds, signal: AbortSignal): Promise<ProbeResult>;
}

/** Single-quotes `v` for sh. */
export const shQuote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

/** The loop run in the Pod: prints `accepting`, then `answered`; exits 3 or 4 (with psql's last error) if it gives up. */
export function probeScript(c: Creds): string {
  const env = [
    ['PGHOST', c.instance_service],
    ['PGDATABASE', c.database],
    ['PGUSER', c.username],
    ['PGPASSWORD', c.password],
    ['PGCONNECT_TIMEOUT', '2'],
  ]
    .map(([k, v]) => `export ${k}=${shQuote(v!)}`)
    .join('; ');
  return [
    env,
    'n=0',
    `until ${POSTGRESQL_BIN}/pg_isready -q -t 2; do n=$((n+1)); [ "$n" -lt ${MAX_ATTEMPTS} ] || exit 3; sleep 0.1; done`,
    'echo accepting',
    `until err=$(${POSTGRESQL_BIN}/psql -X -tA -c 'SELECT 1' 2>&1 >/dev/null); do n=$((n+1)); [ "$n" -lt ${MAX_ATTEMPTS} ] || { echo "$err"; exit 4; }; sleep 0.1; done`,
    'echo answered',
  ].join('\n');
}

/** Starts the client Pod `name` in `namespace` of the app cluster and waits until it runs. */
export async function startAppClient(kube: Kube, namespace: string, name = 'bench-cnpg-client'): Promise<AppClient> {
  await requireOk(kube, 'POST', `/api/v1/namespaces/${namespace}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { 'app.kubernetes.io/name': name } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: CONTAINER,
          image: CNPG_POSTGRESQL_IMAGE,
          imagePullPolicy: 'Never',
          // Runs until deleted; the probes are execs beside it.
          command: ['/bin/sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true },
        },
      ],
    },
  });
  await eventually(
    `the bench's client Pod ${namespace}/${name} running in the app cluster`,
    async () => {
      const p = await getObject(kube, `/api/v1/namespaces/${namespace}/pods/${name}`);
      return p?.status?.phase === 'Running' ? p : undefined;
    },
    120_000,
  );
  return {
    probe: (creds, signal) =>
      new Promise<ProbeResult>((resolve, reject) => {
        const at: Record<string, number> = {};
        let out = '';
        let partial = '';
        const sink = new Writable({
          write(chunk: Buffer, _enc, done) {
            const now = performance.now();
            out += chunk.toString();
            const lines = (partial + chunk.toString()).split('\n');
            partial = lines.pop()!;
            for (const l of lines) at[l.trim()] ??= now;
            done();
          },
        });
        const what = `the probe of ${creds.instance_service} in Pod ${namespace}/${name} of the app cluster`;
        const finished = (status: V1Status) => {
          if (status.status === 'Success' && at.accepting !== undefined && at.answered !== undefined)
            resolve({ acceptingAt: at.accepting, answeredAt: at.answered });
          else reject(new Error(`${what} failed: ${status.message ?? JSON.stringify(status)}\n${out}`));
        };
        new Exec(kube.config)
          .exec(namespace, name, CONTAINER, ['/bin/sh', '-c', probeScript(creds)], sink, sink, null, false, finished)
          .then((ws) => {
            const close = () => {
              ws.close();
              reject(new Error(`${what}: aborted (${String(signal.reason)})`));
            };
            if (signal.aborted) close();
            else signal.addEventListener('abort', close, { once: true });
            ws.on('close', () => {
              signal.removeEventListener('abort', close);
              // The status comes before the close; a close without one (an API server gone) must not hang the bench.
              setTimeout(() => reject(new Error(`${what}: the exec's connection closed without an exit status\n${out}`)), 1_000);
            });
          })
          .catch((e: unknown) => reject(new Error(`${what}: cannot exec: ${String(e)}`, { cause: e })));
      }),
  };
}
