// The cluster side of bench/relay.ts, in its own process so the relay's CPU and memory are measured
// alone: the API simulator over HTTPS with N nodes (realistic status: conditions, addresses, capacity,
// 20 images), their node Leases and M bound pods, then the kubelets' steady state driven directly
// through the in-process store (faster than simulated kubelets): every node's Lease renewed every
// `renewEvery`, spread evenly, and every node's status re-posted with new heartbeats every 5 minutes
// (nodeStatusReportFrequency), also spread. Optional pod churn (delete + re-create per second).
// Talks to the parent over IPC: 'ready' with the kubeconfig, 'stats' on request, 'expire' (every open
// watch ends with 410 Gone, as after an etcd restore, so the relay relists all three resources: the
// store is restored to a snapshot of itself, nothing changes), exits on 'stop'.
//
// At 100,000 nodes the kubelets renew 10,000 Leases a second: the simulator's watch history is raised
// (--history-max-events) so that a watch started after a long first list can still resume (the
// watch cache keeps 75 s, at most about 100,000 events per resource upstream too).
import type { V1Pod } from '@kubernetes/client-node';
import { startApiServer, type Wire } from '../local/apiserver/index.js';
import { formatMicroTime, formatTime } from '../local/apiserver/timestamps.js';

interface Options {
  readonly nodes: number;
  readonly pods: number;
  readonly renewEveryMs: number;
  readonly statusEveryMs: number;
  readonly podChurnPerSecond: number;
  readonly historyMaxEvents: number;
}

function parseOptions(argv: readonly string[]): Options {
  const get = (flag: string, fallback: number): number => {
    const i = argv.indexOf(flag);
    const value = i < 0 ? undefined : Number(argv[i + 1]);
    return value === undefined || !Number.isFinite(value) ? fallback : value;
  };
  return {
    nodes: get('--nodes', 5_000),
    pods: get('--pods', 50_000),
    renewEveryMs: get('--renew-every-ms', 10_000),
    statusEveryMs: get('--status-every-ms', 300_000),
    podChurnPerSecond: get('--pod-churn', 0),
    historyMaxEvents: get('--history-max-events', 100_000),
  };
}

const send = (message: object): void => {
  process.send?.(message);
};

const zones = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'];
const images = Array.from({ length: 20 }, (_, i) => ({
  names: [
    `123456789012.dkr.ecr.eu-west-1.amazonaws.com/team-${i}/service@sha256:${i.toString(16).padStart(64, '0')}`,
    `123456789012.dkr.ecr.eu-west-1.amazonaws.com/team-${i}/service:v1.${i}.0`,
  ],
  sizeBytes: 50_000_000 + i,
}));

function nodeName(i: number): string {
  return `ip-10-0-${i >> 8}-${i & 255}.eu-west-1.compute.internal`;
}

function conditions(heartbeat: number, transition: number) {
  const c = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: formatTime(heartbeat),
    lastTransitionTime: formatTime(transition),
  });
  return [
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    c('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
  ];
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv);
  const api = await startApiServer({ historyMaxEvents: options.historyMaxEvents });
  const { store } = api;
  store.namespaces.create({ metadata: { name: 'nlc-system' } });
  const started = Date.now();
  for (let i = 0; i < options.nodes; i++) {
    const name = nodeName(i);
    const zone = zones[i % zones.length] ?? 'eu-west-1a';
    store.nodes.create({
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'arm64',
          'beta.kubernetes.io/os': 'linux',
          'beta.kubernetes.io/arch': 'arm64',
          'topology.kubernetes.io/zone': zone,
          'topology.kubernetes.io/region': 'eu-west-1',
          'node.kubernetes.io/instance-type': 'm7g.xlarge',
          'eks.amazonaws.com/nodegroup': 'general',
        },
      },
      spec: { providerID: `aws:///${zone}/i-${i.toString(16).padStart(17, '0')}` },
    });
    const now = Date.now();
    store.nodes.patch(
      name,
      {
        status: {
          conditions: conditions(now, started),
          addresses: [
            { type: 'InternalIP', address: `10.0.${i >> 8}.${i & 255}` },
            { type: 'Hostname', address: name },
          ],
          capacity: { cpu: '4', memory: '16068356Ki', pods: '58', 'ephemeral-storage': '83873772Ki' },
          allocatable: { cpu: '3920m', memory: '15051524Ki', pods: '58', 'ephemeral-storage': '76224326324' },
          nodeInfo: {
            machineID: 'ec2'.padEnd(32, '0'),
            systemUUID: 'ec2'.padEnd(36, '0'),
            bootID: 'b'.padEnd(36, '0'),
            kernelVersion: '6.1.112-124.190.amzn2023.aarch64',
            osImage: 'Amazon Linux 2023.6.20241031',
            containerRuntimeVersion: 'containerd://1.7.23',
            kubeletVersion: 'v1.33.0-eks-1234567',
            kubeProxyVersion: 'v1.33.0-eks-1234567',
            operatingSystem: 'linux',
            architecture: 'arm64',
          },
          images,
        },
      },
      { type: 'merge', subresource: 'status' },
    );
    store.leases.create({
      metadata: { name, namespace: 'kube-node-lease' },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatMicroTime(now) },
    });
  }
  const pod = (i: number): Wire<V1Pod> => ({
    metadata: {
      name: `app-${Math.floor(i / 10)}-${(i % 10).toString(36)}`,
      namespace: `team-${i % 20}`,
      labels: { app: `app-${Math.floor(i / 10) % 500}`, 'pod-template-hash': '7c9d8f6b4' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `app-${i % 500}-7c9d8f6b4`,
          uid: `rs-${i % 500}`,
          controller: true,
        },
      ],
    },
    spec: {
      nodeName: nodeName(i % options.nodes),
      containers: [
        {
          name: 'app',
          image: images[i % images.length]?.names[1] ?? 'app',
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          env: [{ name: 'LOG_LEVEL', value: 'info' }],
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
        },
      ],
    },
  });
  for (let i = 0; i < 20; i++) store.namespaces.create({ metadata: { name: `team-${i}` } });
  for (let i = 0; i < options.pods; i++) store.pods.create(pod(i), { namespace: `team-${i % 20}` });
  const seededMs = Date.now() - started;

  // Steady state: spread renewals and status posts evenly over their periods, 10 ticks a second. A
  // status post changes the heartbeats only (lastTransitionTime stays), as a healthy kubelet's does.
  const tickMs = 100;
  let nextLease = 0;
  let nextStatus = 0;
  let leaseCredit = 0;
  let statusCredit = 0;
  let churnCredit = 0;
  let churned = 0;
  let renewals = 0;
  let statusPosts = 0;
  const leasesPerTick = (options.nodes * tickMs) / options.renewEveryMs;
  const statusPerTick = (options.nodes * tickMs) / options.statusEveryMs;
  const timer = setInterval(() => {
    const now = Date.now();
    leaseCredit += leasesPerTick;
    for (; leaseCredit >= 1; leaseCredit--) {
      const name = nodeName(nextLease);
      nextLease = (nextLease + 1) % options.nodes;
      store.leases.patch(
        name,
        { spec: { renewTime: formatMicroTime(now) } },
        { type: 'merge', namespace: 'kube-node-lease' },
      );
      renewals++;
    }
    statusCredit += statusPerTick;
    for (; statusCredit >= 1; statusCredit--) {
      const name = nodeName(nextStatus);
      nextStatus = (nextStatus + 1) % options.nodes;
      store.nodes.patch(
        name,
        { status: { conditions: conditions(now, started) } },
        { type: 'strategic', subresource: 'status' },
      );
      statusPosts++;
    }
    churnCredit += (options.podChurnPerSecond * tickMs) / 1000;
    for (; churnCredit >= 1; churnCredit--) {
      const i = churned++ % options.pods;
      const p = pod(i);
      store.pods.delete(p.metadata?.name ?? '', {
        namespace: p.metadata?.namespace ?? '',
        gracePeriodSeconds: 0,
      });
      store.pods.create(p, { namespace: p.metadata?.namespace ?? '' });
    }
  }, tickMs);

  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stats') {
      send({
        type: 'stats',
        cpu: process.cpuUsage(),
        rss: process.memoryUsage().rss,
        renewals,
        statusPosts,
        podsChurned: churned,
      });
    }
    if (message.type === 'expire') {
      api.store.restore(api.store.snapshot());
      send({ type: 'expired' });
    }
    if (message.type === 'stop') {
      clearInterval(timer);
      void api.close().then(() => process.exit(0));
    }
  });
  send({ type: 'ready', kubeconfigYaml: api.kubeconfigYaml, seededMs });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
