// relay/settings.ts: the relay's environment, read once, every bad variable named at once; and
// relay/leaderElection.ts's checks of client-go's timing constraints.
import { describe, expect, it } from 'vitest';
import { checkLeaderElectionTimings, DefaultLeaderElectionTimings } from '../../../relay/leaderElection.js';
import { loadRelaySettings, relayOwnedEnvVars } from '../../../relay/settings.js';
import { ConfigError } from '../../../shared/errors.js';

describe('loadRelaySettings', () => {
  it('reads the relay variables next to the controller settings it shares', () => {
    expect(
      loadRelaySettings({
        NLC_CLUSTER: 'prod',
        NLC_NODE_MONITOR_PERIOD: '10s',
        NLC_EVENT_BUS_NAME: 'nlc-prod',
        NLC_EVENTBRIDGE_ENDPOINT: 'http://127.0.0.1:4010',
        NLC_RELAY_PORT: '9090',
        NLC_KUBECONFIG: '/etc/nlc/kubeconfig', // the cluster credentials' own variable: not unknown here
        POD_NAME: 'nlc-relay-6f9c7d8b5-x2k4q',
        POD_NAMESPACE: 'nlc-system',
        AWS_REGION: 'eu-west-1',
      }),
    ).toEqual({
      cluster: 'prod',
      nodeMonitorPeriod: 10_000,
      eventBusName: 'nlc-prod',
      eventBridgeEndpoint: 'http://127.0.0.1:4010',
      port: 9090,
      relayId: 'nlc-relay-6f9c7d8b5-x2k4q',
      podNamespace: 'nlc-system',
    });
  });

  it('defaults to stdout, port 8080, the upstream monitor period, and a unique identity outside a pod', () => {
    const settings = loadRelaySettings({});
    expect(settings).toMatchObject({
      cluster: 'default',
      nodeMonitorPeriod: 5_000,
      eventBusName: undefined,
      port: 8080,
      podNamespace: undefined,
    });
    expect(settings.relayId).toMatch(/^.+_[0-9a-f-]{36}$/);
    expect(loadRelaySettings({}, { port: 0 }).port).toBe(0);
  });

  it('names every bad variable in one error', () => {
    const env = {
      NLC_CLUSTER: 'Prod_1',
      NLC_EVENT_BUS_NAME: 'no spaces allowed',
      NLC_EVENTBRIDGE_ENDPOINT: 'ftp://x',
      NLC_RELAY_PORT: '70000',
      NLC_NODE_MONITOR_PERID: '5s',
      POD_NAMESPACE: 'Not-A-Namespace',
    };
    expect(() => loadRelaySettings(env)).toThrow(ConfigError);
    try {
      loadRelaySettings(env);
    } catch (error) {
      expect((error as ConfigError).issues.map((issue) => issue.path).sort()).toEqual([
        'NLC_CLUSTER',
        'NLC_EVENTBRIDGE_ENDPOINT',
        'NLC_EVENT_BUS_NAME',
        'NLC_NODE_MONITOR_PERID',
        'NLC_RELAY_PORT',
        'POD_NAMESPACE',
      ]);
    }
    // Every event carries the cluster name: shared/config.ts holds it to the contract's DNS-1123 label.
    expect(() => loadRelaySettings({ NLC_CLUSTER: 'Prod_1' })).toThrow(
      /NLC_CLUSTER: expected 1 to 63 lowercase/,
    );
  });

  it('wants a bus with an endpoint override', () => {
    expect(() => loadRelaySettings({ NLC_EVENTBRIDGE_ENDPOINT: 'http://127.0.0.1:4010' })).toThrow(
      /NLC_EVENTBRIDGE_ENDPOINT: set NLC_EVENT_BUS_NAME too/,
    );
  });

  it('owns exactly the variables loadConfig must skip', () => {
    expect(
      [...relayOwnedEnvVars].filter((name) => name.startsWith('NLC_RELAY') || name.startsWith('NLC_EVENT')),
    ).toEqual(['NLC_EVENT_BUS_NAME', 'NLC_EVENTBRIDGE_ENDPOINT', 'NLC_RELAY_PORT']);
  });
});

describe('checkLeaderElectionTimings', () => {
  it("accepts client-go's defaults and names each violated constraint", () => {
    expect(() => {
      checkLeaderElectionTimings(DefaultLeaderElectionTimings);
    }).not.toThrow();
    expect(() => {
      checkLeaderElectionTimings({ leaseDuration: 10_000, renewDeadline: 10_000, retryPeriod: 9_000 });
    }).toThrow(
      /leaseDuration must be greater than renewDeadline[\s\S]*renewDeadline must be greater than 1.2 × retryPeriod/,
    );
  });
});
