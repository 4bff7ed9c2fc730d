// `nlc status` against a seeded local stack (dynalite + the real stores, seeded by real passes): the
// structure of each output form, and the values the story in seed.ts leads to.
import { createServer } from 'node:net';
import { stripVTControlCharacters } from 'node:util';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { StatusReport } from '../../../shared/present/statusReport.js';
import { tableNamesWithPrefix } from '../../../shared/adapters/dynamodb/index.js';
import { runCli, tableRow } from './helpers.js';
import { CLUSTER, iso, lastObservedAt, PREFIX, queuedAt, seedStack, t0, type SeededStack } from './seed.js';

let stack: SeededStack;
let target: string[];
beforeAll(async () => {
  stack = await seedStack();
  target = ['--endpoint', stack.endpoint, '--tables-prefix', PREFIX, '--cluster', CLUSTER];
});
afterAll(async () => {
  await stack.stop();
});

const ESC = '\u001b[';

describe('nlc status', () => {
  it('prints a header, the zones table, then the nodes table', async () => {
    // The last digest was committed at lastObservedAt (seed.ts): read 45 s later.
    const { code, stdout, stderr } = await runCli(['status', ...target], { now: lastObservedAt + 45_000 });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'Cluster:            prod',
      `Observed at:        ${iso(lastObservedAt)} (digest #15)`,
      'Last digest:        45s ago',
      'Master disruption:  no',
    ]);
    const zonesAt = lines.findIndex((l) => l.startsWith('ZONE'));
    const nodesAt = lines.findIndex((l) => l.startsWith('NODE'));
    expect(zonesAt).toBeGreaterThan(2);
    // Within the grace period the monitor runs with (50 s here): not flagged.
    expect(stdout).not.toContain('late');
    expect(nodesAt).toBeGreaterThan(zonesAt);
    expect(tableRow(stdout, 'ZONE')).toEqual(['ZONE', 'STATE', 'SIZE', 'UNHEALTHY', 'LIMITER QPS', 'QUEUE']);
    expect(tableRow(stdout, 'region1:zone-a')).toEqual([
      'region1:zone-a',
      'Normal',
      '4',
      '2 (50%)',
      '0.01',
      '1',
    ]);
    expect(tableRow(stdout, 'region1:zone-b')).toEqual([
      'region1:zone-b',
      'Normal',
      '1',
      '0 (0%)',
      '0.01',
      '0',
    ]);
    expect(tableRow(stdout, 'NODE')).toEqual([
      'NODE',
      'ZONE',
      'READY',
      'TAINTS',
      'PROBE AGE',
      'EVICTION',
      'EXCLUDED',
    ]);
    // a-1 and a-2 went silent at t0; the last digest is at t0 + 70 s (the relay clock). The others
    // renewed at every digest: "live", not the age of the probe stored when they were registered.
    expect(tableRow(stdout, 'a-1')).toEqual([
      'a-1',
      'region1:zone-a',
      'Unknown',
      'unreachable:NoExecute',
      '1m10s',
      'processed',
      'no',
    ]);
    expect(tableRow(stdout, 'a-2')).toEqual([
      'a-2',
      'region1:zone-a',
      'Unknown',
      '-',
      '1m10s',
      'queued #1',
      'no',
    ]);
    expect(tableRow(stdout, 'a-3')).toEqual(['a-3', 'region1:zone-a', 'True', '-', 'live', '-', 'no']);
    expect(tableRow(stdout, 'b-2')).toEqual(['b-2', 'region1:zone-b', 'True', '-', 'live', '-', 'yes']);
    // Node rows in name order, right after the header.
    expect(lines.slice(nodesAt + 1, nodesAt + 7).map((l) => l.split(' ')[0])).toEqual([
      'a-1',
      'a-2',
      'a-3',
      'a-4',
      'b-1',
      'b-2',
    ]);
  });

  it('aligns every column: each cell starts where its header does', async () => {
    const { stdout } = await runCli(['status', ...target]);
    const lines = stdout.split('\n');
    const header = lines.find((l) => l.startsWith('NODE')) ?? '';
    const row = lines.find((l) => l.startsWith('a-1 ')) ?? '';
    expect(row.indexOf('Unknown')).toBe(header.indexOf('READY'));
    expect(row.indexOf('unreachable:NoExecute')).toBe(header.indexOf('TAINTS'));
    expect(row.indexOf('processed')).toBe(header.indexOf('EVICTION'));
    // PROBE AGE is right-aligned: the value ends where the header ends.
    expect(row.indexOf('1m10s') + '1m10s'.length).toBe(header.indexOf('PROBE AGE') + 'PROBE AGE'.length);
  });

  it('-o wide adds tokens, uids and the times', async () => {
    // Zone a's one token was taken at t0 + 60 s and refills at 0.01 qps: 0.3 tokens 30 s later.
    const { code, stdout } = await runCli(['status', ...target, '-o', 'wide'], { now: t0 + 90_000 });
    expect(code).toBe(0);
    expect(tableRow(stdout, 'ZONE')).toEqual([
      'ZONE',
      'STATE',
      'SIZE',
      'UNHEALTHY',
      'LIMITER QPS',
      'TOKENS',
      'QUEUE',
      'PROCESSED',
    ]);
    expect(tableRow(stdout, 'region1:zone-a')).toEqual([
      'region1:zone-a',
      'Normal',
      '4',
      '2 (50%)',
      '0.01',
      '0.30/1',
      '1',
      '1',
    ]);
    expect(tableRow(stdout, 'region1:zone-b')?.[5]).toBe('1.00/1');
    expect(tableRow(stdout, 'NODE')).toEqual([
      'NODE',
      'ZONE',
      'READY',
      'TAINTS',
      'PROBE AGE',
      'EVICTION',
      'EXCLUDED',
      'UID',
      'READY SINCE',
      'PROBE',
      'LEASE',
      'PROCESS AT',
    ]);
    expect(tableRow(stdout, 'a-2')?.slice(7)).toEqual([
      'uid-a-2',
      iso(t0 + 55_000),
      iso(t0),
      iso(t0),
      iso(queuedAt),
    ]);
  });

  it('flags a last digest older than the grace period the monitor runs with', async () => {
    const { code, stdout } = await runCli(['status', ...target], { now: lastObservedAt + 51_000 });
    expect(code).toBe(0);
    expect(stdout.split('\n')[2]).toBe(
      'Last digest:        51s ago (late: more than the 50s grace period; is the relay or the bus down?)',
    );
    const json = await runCli(['status', ...target, '-o', 'json'], { now: lastObservedAt + 51_000 });
    expect(JSON.parse(json.stdout)).toMatchObject({
      lastDigestAgeSeconds: 51,
      lastDigestLate: true,
      nodeMonitorGracePeriodSeconds: 50,
    });
  });

  it('-o json prints the whole report with stable field names', async () => {
    const { code, stdout } = await runCli(['status', ...target, '-o', 'json'], { now: t0 + 90_000 });
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as StatusReport;
    expect(Object.keys(report)).toEqual([
      'cluster',
      'observedAt',
      'lastSequence',
      'lastDigestAgeSeconds',
      'lastDigestLate',
      'nodeMonitorGracePeriodSeconds',
      'relayTerm',
      'relayTermVerified',
      'refusedDigests',
      'lastRefusal',
      'lastRefusalAgeSeconds',
      'relayLastSeen',
      'emulationVersion',
      'mode',
      'clusterVersion',
      'masterDisruption',
      'zones',
      'nodes',
    ]);
    expect(report).toMatchObject({
      cluster: 'prod',
      observedAt: iso(lastObservedAt),
      lastSequence: 15,
      lastDigestAgeSeconds: 20,
      lastDigestLate: false,
      nodeMonitorGracePeriodSeconds: 50,
      masterDisruption: false,
    });
    expect(report.zones[0]).toEqual({
      zone: 'region1:zone-a',
      state: 'Normal',
      size: 4,
      unhealthy: 2,
      unhealthyPercent: 50,
      limiter: {
        kind: 'tokenBucket',
        qps: 0.01,
        burst: 1,
        tokens: 0,
        last: iso(t0 + 60_000),
        tokensNow: 0.3,
        at: iso(t0 + 90_000),
      },
      queueLength: 1,
      processedOnce: 1,
    });
    expect(report.nodes.map((n) => n.name)).toEqual(['a-1', 'a-2', 'a-3', 'a-4', 'b-1', 'b-2']);
    expect(report.nodes[0]).toEqual({
      name: 'a-1',
      uid: 'uid-a-1',
      zone: 'region1:zone-a',
      ready: 'Unknown',
      readyTransition: iso(t0 + 55_000),
      taints: ['unreachable:NoExecute'],
      allTaints: [
        { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: iso(t0 + 60_000) },
      ],
      probeTime: iso(t0),
      probeAgeSeconds: 70,
      probe: 'silent',
      leaseRenewTime: iso(t0),
      eviction: { position: null, processAt: null, processed: true, status: null },
      excluded: false,
      registered: true,
      retry: false,
      deleted: false,
    });
    expect(report.nodes[1]?.eviction).toEqual({
      position: 1,
      processAt: iso(queuedAt),
      processed: false,
      status: null,
    });
    expect(report.nodes[2]).toMatchObject({ name: 'a-3', probe: 'live', probeAgeSeconds: null });
  });

  it('-o yaml parses to the same report as -o json', async () => {
    const json = await runCli(['status', ...target, '-o', 'json'], { now: t0 + 90_000 });
    const yaml = await runCli(['status', ...target, '-o', 'yaml'], { now: t0 + 90_000 });
    expect(yaml.code).toBe(0);
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout));
  });

  it('colours only a terminal, and not with NO_COLOR set', async () => {
    // One reader's instant for every run compared: the ages are the reader's clock against the writer's.
    const now = t0 + 90_000;
    const plain = await runCli(['status', ...target], { now });
    expect(plain.stdout).not.toContain(ESC);
    const tty = await runCli(['status', ...target], { tty: true, now });
    expect(tty.stdout).toContain(`${ESC}32mNormal`);
    expect(tty.stdout).toContain(`${ESC}31mUnknown`);
    expect(stripVTControlCharacters(tty.stdout)).toBe(plain.stdout);
    const noColor = await runCli(['status', ...target], { tty: true, env: { NO_COLOR: '1' }, now });
    expect(noColor.stdout).toBe(plain.stdout);
  });

  it('takes the endpoint, the cluster and the table names from the environment', async () => {
    const names = tableNamesWithPrefix(PREFIX);
    const env = {
      NLC_DYNAMODB_ENDPOINT: stack.endpoint,
      NLC_CLUSTER: CLUSTER,
      NLC_NODES_TABLE: names.nodes,
      NLC_ZONES_TABLE: names.zones,
      NLC_EVICTION_QUEUE_TABLE: names.evictionQueue,
      NLC_POD_EVICTIONS_TABLE: names.podEvictions,
      NLC_DECISIONS_TABLE: names.decisions,
    };
    const now = t0 + 90_000;
    const fromEnv = await runCli(['status'], { env, now });
    const fromFlags = await runCli(['status', ...target], { now });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout).toBe(fromFlags.stdout);
  });

  it('says so when the cluster has no state, and exits 0', async () => {
    const { code, stdout } = await runCli([
      'status',
      '--endpoint',
      stack.endpoint,
      '--tables-prefix',
      PREFIX,
      '--cluster',
      'elsewhere',
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain('No zones or nodes stored for cluster elsewhere');
  });

  it("names the minor the controller emulates, its mode and the cluster's version, as the monitor records them", async () => {
    const stores = stack.db.stores();
    const loaded = await stores.controllerState.load('versions');
    await stores.controllerState.commit(loaded, {
      state: loaded.state,
      meta: {
        masterDisruption: false,
        emulationVersion: '1.34',
        dryRun: true,
        clusterVersion: 'v1.33.0',
        clusterVersionReadAt: t0,
      },
    });
    const at = ['--endpoint', stack.endpoint, '--tables-prefix', PREFIX, '--cluster', 'versions'];
    const { stdout } = await runCli(['status', ...at]);
    expect(stdout).toContain(
      'Controller:         emulates 1.34, shadow mode (dryRun: writes nothing); the cluster runs v1.33.0\n',
    );
    const report = JSON.parse((await runCli(['status', ...at, '-o', 'json'])).stdout) as StatusReport;
    expect(report).toMatchObject({ emulationVersion: '1.34', mode: 'shadow', clusterVersion: 'v1.33.0' });
  });

  it('exits 1 with a clear message when the endpoint does not answer', async () => {
    // A port that was just free: nothing listens on it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      probe.close(() => {
        resolve();
      });
    });
    const endpoint = `http://127.0.0.1:${port}`;
    const { code, stdout, stderr } = await runCli(['status', '--endpoint', endpoint, '--cluster', CLUSTER]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `error: cannot read the state tables at ${endpoint}: no answer (ECONNREFUSED); ` +
        'is the local stack running, and are --endpoint / NLC_DYNAMODB_ENDPOINT right?\n',
    );
  });

  it('exits 1 naming the table when the tables do not exist', async () => {
    const { code, stderr } = await runCli([
      'status',
      '--endpoint',
      stack.endpoint,
      '--tables-prefix',
      'nope',
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain('table nope-zones does not exist; check --stage / --tables-prefix / --region');
  });

  it('exits 2 naming every bad option', async () => {
    const { code, stdout, stderr } = await runCli([
      'status',
      '--endpoint',
      'localhost:8000',
      '--stage',
      'prod',
      '--tables-prefix',
      'nlc-prod',
      '-o',
      'xml',
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')).toEqual([
      'error: Invalid options (3 problems):',
      '- --endpoint: expected an http(s) URL like http://127.0.0.1:8000',
      '- --output: "xml" is not an output format: expected json, yaml or wide',
      '- --tables-prefix: give --stage or --tables-prefix, not both',
      '',
    ]);
  });

  it('exits 2 naming a bad NLC_ variable', async () => {
    const { code, stderr } = await runCli(['status', ...target], { env: { NLC_CLUSTER: 'Not_A_Name' } });
    // The flag wins over the variable, but a bad variable is still reported (shared/config.ts).
    expect(code).toBe(2);
    expect(stderr).toMatch(/^error: Invalid configuration \(1 problem\):\n- NLC_CLUSTER: /);
  });
});
