// relay/settings.ts: the relay's environment, read once, every bad variable named at once; and
// relay/leaderElection.ts's checks of client-go's timing constraints.
import { describe, expect, it } from 'vitest';
import { checkLeaderElectionTimings, DefaultLeaderElectionTimings } from '../../../relay/leaderElection.js';
import { loadRelaySettings, relayOwnedEnvVars } from '../../../relay/settings.js';
import { PutEventsMaxBytes } from '../../../shared/adapters/eventbridge/putEvents.js';
import { ConfigError } from '../../../shared/errors.js';
import { DefaultDigestEntryMaxBytes } from '../../../shared/heartbeatDigest.js';

/** What loadRelaySettings refuses in `env`, as `VARIABLE: message` lines; none when it loads. */
function issues(env: Record<string, string>): string[] {
  try {
    loadRelaySettings(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('loadRelaySettings', () => {
  it('reads the relay variables next to the controller settings it shares', () => {
    expect(
      loadRelaySettings({
        NLC_CLUSTER: 'prod',
        NLC_NODE_MONITOR_PERIOD: '10s',
        NLC_EVENT_BUS_NAME: 'nlc-prod',
        NLC_EVENTBRIDGE_ENDPOINT: 'http://127.0.0.1:4010',
        NLC_RELAY_PORT: '9090',
        NLC_RELAY_HOST: '0.0.0.0',
        NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT: '18s',
        NLC_RELAY_WATCH_STALL_TIMEOUT: '5m',
        NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: '1000000',
        NLC_RELAY_QUIET_DIGEST_PERIOD: '12s',
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
      host: '0.0.0.0',
      leaseWatchStallTimeout: 18_000,
      watchStallTimeout: 300_000,
      digestEntryMaxBytes: 1_000_000,
      quietDigestPeriod: 12_000,
      relayId: 'nlc-relay-6f9c7d8b5-x2k4q',
      podNamespace: 'nlc-system',
    });
  });

  it('defaults to stdout, port 8080 on 127.0.0.1, the upstream monitor period, and a unique identity outside a pod', () => {
    const settings = loadRelaySettings({});
    expect(settings).toMatchObject({
      cluster: 'default',
      nodeMonitorPeriod: 5_000,
      eventBusName: undefined,
      port: 8080,
      host: '127.0.0.1',
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
      NLC_RELAY_HOST: 'relay.example',
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
        'NLC_RELAY_HOST',
        'NLC_RELAY_PORT',
        'POD_NAMESPACE',
      ]);
    }
    // Every event carries the cluster name: shared/config.ts holds it to the contract's DNS-1123 label.
    expect(() => loadRelaySettings({ NLC_CLUSTER: 'Prod_1' })).toThrow(
      /NLC_CLUSTER: expected 1 to 63 lowercase/,
    );
  });

  it('takes the bind address from --host over NLC_RELAY_HOST, and only as an IP address', () => {
    expect(loadRelaySettings({ NLC_RELAY_HOST: '0.0.0.0' }, { host: '::1' }).host).toBe('::1');
    expect(() => loadRelaySettings({}, { host: 'localhost' })).toThrow(
      '--host: expected an IP address such as 127.0.0.1 or 0.0.0.0',
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
    ).toEqual([
      'NLC_EVENT_BUS_NAME',
      'NLC_EVENTBRIDGE_ENDPOINT',
      'NLC_RELAY_PORT',
      'NLC_RELAY_HOST',
      'NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT',
      'NLC_RELAY_WATCH_STALL_TIMEOUT',
      'NLC_RELAY_DIGEST_ENTRY_MAX_BYTES',
      'NLC_RELAY_QUIET_DIGEST_PERIOD',
    ]);
  });
});

describe('the digest entry size', () => {
  it("defaults to 255 KiB, which every partition's entry limit takes", () => {
    expect(loadRelaySettings({}).digestEntryMaxBytes).toBe(261_120);
    expect(loadRelaySettings({}).digestEntryMaxBytes).toBe(DefaultDigestEntryMaxBytes);
  });

  it('takes any size from one billing chunk to what PutEvents accepts', () => {
    expect(loadRelaySettings({ NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: '65536' }).digestEntryMaxBytes).toBe(65_536);
    expect(loadRelaySettings({ NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: ' 1000000 ' }).digestEntryMaxBytes).toBe(
      PutEventsMaxBytes,
    );
  });

  it.each([
    ['1000001', /^NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: expected at most 1000000 \(what PutEvents takes/],
    ['1048576', /^NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: expected at most 1000000/],
    ['65535', /^NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: expected at least 65536 \(one 64 KB billing chunk\)$/],
    ['1MB', /^NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: expected a number of bytes, digits only$/],
    ['-1', /^NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: expected a number of bytes, digits only$/],
    ['1e6', /^NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: expected a number of bytes, digits only$/],
  ])('rejects %s, naming the variable', (value, want) => {
    expect(issues({ NLC_RELAY_DIGEST_ENTRY_MAX_BYTES: value })).toEqual([expect.stringMatching(want)]);
  });
});

describe('the watch stall timeouts', () => {
  it('default to 20 s for the lease watch and 3 minutes for the others', () => {
    expect(loadRelaySettings({})).toMatchObject({
      leaseWatchStallTimeout: 20_000,
      watchStallTimeout: 180_000,
    });
  });

  it('shorten the lease default when a short grace period leaves less room, down to 15 s', () => {
    // Room: grace − 10 s (kubelet renewals) − 2 × nodeMonitorPeriod.
    expect(loadRelaySettings({ NLC_NODE_MONITOR_GRACE_PERIOD: '37s' }).leaseWatchStallTimeout).toBe(17_000);
    expect(loadRelaySettings({ NLC_NODE_MONITOR_GRACE_PERIOD: '20s' }).leaseWatchStallTimeout).toBe(15_000);
  });

  it('reject a lease stall timeout that leaves no room within the grace period, naming the variable', () => {
    expect(issues({ NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT: '31s' })).toEqual([
      "NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT: 31s leaves no room within nodeMonitorGracePeriod (50s): at most 30s, the grace period less the kubelets' renewal interval (10s) and two nodeMonitorPeriods for the relist, or healthy nodes are marked Unknown before a stall is found",
    ]);
    expect(
      loadRelaySettings({ NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT: '40s', NLC_NODE_MONITOR_GRACE_PERIOD: '1m' })
        .leaseWatchStallTimeout,
    ).toBe(40_000);
  });

  it('reject timeouts too short for the renewals or the bookmarks they wait for, and garbage', () => {
    expect(
      issues({
        NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT: '10s',
        NLC_RELAY_WATCH_STALL_TIMEOUT: '1m',
      }),
    ).toEqual([
      'NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT: expected at least 15s (kubelets renew every 10s), got "10s"',
      'NLC_RELAY_WATCH_STALL_TIMEOUT: expected 0 (no watchdog) or at least 1m30s (the API server sends a bookmark about every minute), got "1m"',
    ]);
    expect(
      issues({ NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT: 'soon', NLC_RELAY_WATCH_STALL_TIMEOUT: '-1m' }),
    ).toEqual([
      'NLC_RELAY_LEASE_WATCH_STALL_TIMEOUT: expected a duration like "40s", "5m" or a number of seconds, got "soon"',
      'NLC_RELAY_WATCH_STALL_TIMEOUT: expected a duration of 0 or more, got "-1m"',
    ]);
  });

  it('turn the node and pod watchdog off with 0 (an API server without bookmarks)', () => {
    expect(loadRelaySettings({ NLC_RELAY_WATCH_STALL_TIMEOUT: '0' }).watchStallTimeout).toBe(0);
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
