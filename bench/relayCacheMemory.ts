// What the relay's informer caches hold per node and per pod, in process and without the API server:
// the bytes a trimmed, interned object and its cache entry add to V8's heap after a full GC. Load- and
// machine-independent (unlike bench/relay.ts), so it is what the sizing model in docs/relay.md is
// fitted with. Objects as the bench simulator makes them: EKS-like nodes (4 conditions, 9 labels), pods
// with an owner, the two default NoExecute tolerations, 10 a node over 20 namespaces.
//
//   npx tsx --expose-gc bench/relayCacheMemory.ts [--nodes 100000] [--pods-per-node 10]
import { Interner } from '../relay/intern.js';
import { Reflector } from '../relay/reflector.js';
import { nodeFromV1, podFromV1, type Mapped } from '../relay/shaping.js';
import { RealScheduler } from '../shared/adapters/realScheduler.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i < 0 ? undefined : Number(args[i + 1]);
  return value === undefined || !Number.isFinite(value) ? fallback : value;
};
const nodes = flag('--nodes', 100_000);
const pods = nodes * flag('--pods-per-node', 10);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const nodeName = (i: number) => `ip-10-${i >> 16}-${(i >> 8) & 255}-${i & 255}.eu-west-1.compute.internal`;
const time = '2026-11-28T08:00:00Z';
const condition = (type: string, status: string, reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastHeartbeatTime: time,
  lastTransitionTime: '2026-11-28T07:00:00Z',
});
const node = (i: number) => ({
  metadata: {
    name: nodeName(i),
    uid: crypto.randomUUID(),
    resourceVersion: String(i + 5),
    creationTimestamp: '2026-11-28T06:00:00Z',
    labels: {
      'kubernetes.io/hostname': nodeName(i),
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'arm64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'arm64',
      'topology.kubernetes.io/zone': `eu-west-1${'abc'[i % 3] ?? 'a'}`,
      'topology.kubernetes.io/region': 'eu-west-1',
      'node.kubernetes.io/instance-type': 'm7g.xlarge',
      'eks.amazonaws.com/nodegroup': 'general',
    },
  },
  spec: {},
  status: {
    conditions: [
      condition(
        'MemoryPressure',
        'False',
        'KubeletHasSufficientMemory',
        'kubelet has sufficient memory available',
      ),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ],
  },
});
const defaultToleration = (key: string) => ({
  key,
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
});
const pod = (i: number) => ({
  metadata: {
    name: `app-${Math.floor(i / 10)}-${(i % 10).toString(36)}`,
    namespace: `team-${i % 20}`,
    uid: crypto.randomUUID(),
    resourceVersion: String(1_000_000 + i),
    creationTimestamp: time,
    ownerReferences: [
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: `app-${i % 500}`,
        uid: `rs-${i % 500}`,
        controller: true,
      },
    ],
  },
  spec: {
    nodeName: nodeName(i % nodes),
    tolerations: [
      defaultToleration('node.kubernetes.io/not-ready'),
      defaultToleration('node.kubernetes.io/unreachable'),
    ],
  },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});

const scheduler = new RealScheduler();
const interner = new Interner();

/** A reflector that lists `count` objects (each parsed from its own JSON, as off the wire) and stops. */
async function listed<T>(count: number, make: (i: number) => unknown, read: (raw: unknown) => Mapped<T>) {
  const reflector = new Reflector<T>({
    resource: 'bench',
    watch: { watch: () => Promise.resolve(new AbortController()) },
    watchPath: '/bench',
    scheduler,
    list: (page) => {
      const start = Number(page.continue ?? 0);
      const end = Math.min(count, start + page.limit);
      const items: unknown[] = [];
      for (let i = start; i < end; i++) items.push(JSON.parse(JSON.stringify(make(i))));
      return Promise.resolve({ items, resourceVersion: '1', ...(end < count && { continue: String(end) }) });
    },
    read,
    handler: { add: () => undefined, update: () => undefined, delete: () => undefined },
  });
  await reflector.start();
  reflector.stop();
  return reflector;
}

const heap = (): number => {
  gc();
  return process.memoryUsage().heapUsed;
};
const h0 = heap();
const nodeCache = await listed(nodes, node, (raw) => {
  const mapped = nodeFromV1(raw);
  return mapped.ok ? { ok: true, value: interner.node(mapped.value) } : mapped;
});
const h1 = heap();
const podCache = await listed(pods, pod, (raw) => {
  const mapped = podFromV1(raw);
  return mapped.ok ? { ok: true, value: interner.pod(mapped.value) } : mapped;
});
const h2 = heap();
scheduler.close();
const mib = (n: number) => (n / 2 ** 20).toFixed(1);
process.stdout.write(
  `${nodeCache.status().objects} nodes: ${((h1 - h0) / nodes).toFixed(0)} B each (${mib(h1 - h0)} MiB); ` +
    `${podCache.status().objects} pods: ${((h2 - h1) / pods).toFixed(0)} B each (${mib(h2 - h1)} MiB); ` +
    `heap ${mib(h2)} MiB (Node ${process.version})\n`,
);
