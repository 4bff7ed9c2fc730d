// The local stack's simulated cluster: the Kubernetes API simulator over https on loopback, with the
// functions' and the relay's identities and their RBAC rules from infra/ (local/simulate/identities.ts),
// a kubeconfig for each (and an admin one for people), and the kubelet fleet running the seeded cluster
// on the system clock. Its controls are the live view's keys.
import { randomBytes } from 'node:crypto';
import { RealScheduler } from '../../shared/adapters/realScheduler.js';
import type { ControllerConfig } from '../../shared/config.js';
import type { VersionInfo } from '../apiserver/discovery.js';
import { startApiServer, writeKubeconfig, type ApiServerHandle } from '../apiserver/index.js';
import {
  KubeletFleet,
  type KubeletFleetOptions,
  type KubeletState,
  type SeedCluster,
} from '../kubelet/index.js';
import { simulatorIdentities } from '../simulate/identities.js';
import type { StackLogger } from './log.js';
import { explainListenError } from './ports.js';

export type KubeletTimings = Pick<
  KubeletFleetOptions,
  | 'nodeLeaseDurationSeconds'
  | 'nodeStatusUpdateFrequency'
  | 'nodeStatusReportFrequency'
  | 'podStatusSyncPeriod'
  | 'podTerminationDelay'
>;

/** The simulated cluster's controls (the live view's keys). */
export interface SimulatorControls {
  readonly api: ApiServerHandle;
  readonly fleet: KubeletFleet;
  /** Node name → zone label, for every simulated node. */
  readonly zoneOf: ReadonlyMap<string, string>;
  readonly kubeletState: (node: string) => KubeletState | undefined;
  readonly stopKubelet: (node: string) => void;
  readonly startKubelet: (node: string) => void;
  /** Stops every kubelet of the zone. */
  readonly failZone: (zone: string) => void;
  /** Starts every stopped kubelet of the zone. */
  readonly restoreZone: (zone: string) => void;
}

/**
 * The kubelets' timings: upstream's (40 s lease renewed every 10 s, status computed every 10 s), or a
 * quarter of a shorter grace period, so a short grace period does not make healthy nodes look silent;
 * `given` wins. The status report frequency (unchanged status posted every 5 min) is the fleet's
 * upstream default unless given (`--node-status-report-frequency`).
 *
 * @example
 * kubeletTimingsFor({ ...config, nodeMonitorGracePeriod: 4_000 }); // lease 4 s (renewed every 1 s), status every 1 s
 */
export function kubeletTimingsFor(config: ControllerConfig, given: KubeletTimings = {}): KubeletTimings {
  const quarter = Math.floor(config.nodeMonitorGracePeriod / 4);
  const leaseSeconds = Math.max(1, Math.min(40, Math.floor(config.nodeMonitorGracePeriod / 1000)));
  return {
    nodeLeaseDurationSeconds: leaseSeconds,
    nodeStatusUpdateFrequency: Math.max(250, Math.min(10_000, quarter)),
    ...given,
  };
}

export interface StartSimulatorOptions {
  readonly port: number;
  /** Where to write the kubeconfigs: people's (admin), the functions', the relay's. */
  readonly kubeconfigs: { readonly admin: string; readonly controller: string; readonly relay: string };
  readonly cluster: SeedCluster;
  readonly timings: KubeletTimings;
  /** What /version reports: the minor the cluster's controller runs. */
  readonly version?: VersionInfo;
  readonly logger: StackLogger;
}

export interface Simulator {
  readonly controls: SimulatorControls;
  /** Stops the kubelets and their clock (the API server stays up: close it after the functions stop). */
  stopKubelets(): void;
  close(): Promise<void>;
}

/**
 * Starts the API simulator, writes the kubeconfigs, seeds the cluster and starts its kubelets.
 *
 * @example
 * const sim = await startSimulator({ port: 0, kubeconfigs, cluster: demoCluster(), timings: {}, logger });
 * sim.controls.stopKubelet('zone-a-1');
 */
export async function startSimulator(options: StartSimulatorOptions): Promise<Simulator> {
  const { logger, cluster } = options;
  const identities = await simulatorIdentities();
  // Fresh tokens per start: the kubeconfigs in the data directory are the only way in.
  const controller = { ...identities.controller, token: randomBytes(24).toString('base64url') };
  const relay = { ...identities.relay, token: randomBytes(24).toString('base64url') };
  let api: ApiServerHandle;
  try {
    api = await startApiServer({
      port: options.port,
      identities: [controller, relay],
      ...(options.version !== undefined && { version: options.version }),
    });
  } catch (error) {
    throw explainListenError(error, 'apiServer', options.port);
  }
  try {
    await api.writeKubeconfig(options.kubeconfigs.admin);
    const connection = { server: api.url, ...(api.caPem !== undefined && { caPem: api.caPem }) };
    await writeKubeconfig(options.kubeconfigs.controller, { ...connection, token: controller.token });
    await writeKubeconfig(options.kubeconfigs.relay, { ...connection, token: relay.token });
  } catch (error) {
    await api.close();
    throw error;
  }

  const scheduler = new RealScheduler({
    onError: (error) => {
      logger.log('WARN', 'kubelets', 'kubelet timer failed', {
        error: error instanceof Error ? error.message : String(error),
      });
    },
  });
  const fleet = new KubeletFleet({
    store: api.store,
    scheduler,
    ...options.timings,
    onApiError: (error, where) => {
      logger.log('DEBUG', 'kubelets', 'kubelet API call failed', { ...where, error: error.message });
    },
  });
  for (const namespace of new Set((cluster.pods ?? []).map((p) => p.namespace ?? 'default'))) {
    try {
      api.store.namespaces.get(namespace);
    } catch {
      api.store.namespaces.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    }
  }
  fleet.seed(cluster);

  const zoneOf = new Map(cluster.nodes.map((n) => [n.name, n.zone ?? '']));
  const nodesIn = (zone: string): string[] => [...zoneOf].filter(([, z]) => z === zone).map(([name]) => name);
  const state = (node: string): KubeletState | undefined => fleet.kubelet(node)?.state;
  const controls: SimulatorControls = {
    api,
    fleet,
    zoneOf,
    kubeletState: state,
    stopKubelet: (node) => {
      if (state(node) === 'running') fleet.stopKubelet(node);
      logger.log('INFO', 'kubelets', 'kubelet stopped', { node });
    },
    startKubelet: (node) => {
      if (state(node) === 'stopped') fleet.startKubelet(node);
      logger.log('INFO', 'kubelets', 'kubelet started', { node });
    },
    failZone: (zone) => {
      for (const node of nodesIn(zone)) if (state(node) === 'running') fleet.stopKubelet(node);
      logger.log('INFO', 'kubelets', 'zone failed: every kubelet stopped', { zone });
    },
    restoreZone: (zone) => {
      for (const node of nodesIn(zone)) if (state(node) === 'stopped') fleet.startKubelet(node);
      logger.log('INFO', 'kubelets', 'zone restored: every kubelet started', { zone });
    },
  };
  let kubeletsStopped = false;
  const stopKubelets = (): void => {
    if (kubeletsStopped) return;
    kubeletsStopped = true;
    fleet.close();
    scheduler.close();
  };
  return {
    controls,
    stopKubelets,
    close: async () => {
      stopKubelets();
      await api.close();
    },
  };
}
