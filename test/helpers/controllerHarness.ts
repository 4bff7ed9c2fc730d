// Drives the controller passes against a FakeCluster, stepping as upstream's test bodies do.
import type { ControllerConfig } from '../../shared/config.js';
import { type ControllerState, emptyControllerState } from '../../shared/domain/controllerState.js';
import { drive } from '../../shared/domain/effects.js';
import { doEvictionPass } from '../../shared/domain/legacyEvictionPass.js';
import { monitorNodeHealth, type MonitorPassResult } from '../../shared/domain/monitorNodeHealth.js';
import { doNoExecuteTaintingPass } from '../../shared/domain/taintBasedEviction.js';
import type { Lease } from '../../shared/domain/types.js';
import type { FakeCluster } from './fakeCluster.js';

// Upstream test constants (current file): grace 50s, startup 60s, period 5s, QPS 100000,
// large-cluster threshold 20, unhealthy threshold 0.55.
export const testConfig: ControllerConfig = {
  emulationVersion: '1.37',
  nodeMonitorPeriod: 5_000,
  nodeMonitorGracePeriod: 50_000,
  nodeStartupGracePeriod: 60_000,
  nodeEvictionRate: 100_000,
  secondaryNodeEvictionRate: 100_000,
  largeClusterSizeThreshold: 20,
  unhealthyZoneThreshold: 0.55,
  podEvictionTimeout: 5 * 60_000,
  evictionMode: 'taint',
  nodeEvictionPeriod: 100,
  kubeApiQps: 20,
  kubeApiBurst: 30,
  dryRun: false,
  cluster: 'test',
  relayLease: 'nlc-system/nlc-relay',
};

/** A controller plus its fake cluster, stepping like upstream's test bodies do. */
export class Harness {
  state: ControllerState = emptyControllerState();
  last?: MonitorPassResult;
  leases = new Map<string, Lease>();

  constructor(
    readonly cluster: FakeCluster,
    readonly config: ControllerConfig = testConfig,
    readonly options: Parameters<typeof monitorNodeHealth>[4] = {},
  ) {}

  /** syncNodeStore + monitorNodeHealth at `now`. */
  monitor(now: number): MonitorPassResult {
    const nodes = this.cluster.list();
    const result = drive(
      monitorNodeHealth(this.state, { nodes, leases: this.leases }, now, this.config, this.options),
      this.cluster.execute,
    );
    this.state = result.state;
    this.last = result;
    return result;
  }

  /** doNoExecuteTaintingPass against the node cache; the clock advances 1ms per read, like real time. */
  taintingPass(now: number): void {
    const nodes = new Map(this.cluster.list().map((n) => [n.name, n]));
    let clock = now;
    const result = drive(
      doNoExecuteTaintingPass(this.state.zoneQueues, nodes, () => clock++),
      this.cluster.execute,
    );
    this.state = { ...this.state, zoneQueues: result.zoneQueues };
  }

  /** Legacy doEvictionPass (or upstream tests' Try with DeletePods); the clock advances 1ms per read. */
  evictionPass(now: number): void {
    const nodes = new Map(this.cluster.list().map((n) => [n.name, n]));
    let clock = now;
    const result = drive(
      doEvictionPass(this.state.zoneQueues, this.state.nodeEvictionStatus, nodes, () => clock++),
      this.cluster.execute,
    );
    this.state = {
      ...this.state,
      zoneQueues: result.zoneQueues,
      nodeEvictionStatus: result.nodeEvictionStatus,
    };
  }

  queued(zone: string): string[] {
    return (this.state.zoneQueues.get(zone)?.queue ?? []).map((v) => v.value);
  }
}
