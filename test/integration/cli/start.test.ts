// `nlc start` (npm start): its flags, their validation before anything starts, and which cluster it
// uses. Starting the stack itself is test/e2e/localStack*.test.ts.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chooseKubeconfig,
  managedControllerOf,
  PortOptionKeys,
  portsOf,
  StartOptionsSchema,
} from '../../../cli/commands/start.js';
import { versionInfoOf } from '../../../local/apiserver/discovery.js';
import { startApiServer } from '../../../local/apiserver/index.js';
import { DefaultPorts, PortInfo, PortNames } from '../../../local/stack/ports.js';
import { checkRealCluster } from '../../../local/stack/realCluster.js';
import { ConfigError } from '../../../shared/errors.js';
import { runCli } from './helpers.js';

let dir: string;
let kubeconfig: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nlc-start-'));
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('nlc start', () => {
  it('--help lists the flags, the ports with their defaults, the keys and the settings', async () => {
    const { code, stdout } = await runCli(['start', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: nlc start [options]');
    for (const name of PortNames) expect(stdout).toContain(`${PortInfo[name].flag} (${DefaultPorts[name]})`);
    for (const flag of [
      '--kubeconfig',
      '--no-ui',
      '--data-dir',
      '--ephemeral',
      '--node-monitor-grace-period',
      '--dry-run',
      '--managed-controller',
      '--managed-set',
    ]) {
      expect(stdout).toContain(flag);
    }
    expect(stdout).toContain('s stop/start its kubelet, z fail/restore its zone');
  });

  it('rejects a bad port by its flag, before starting anything (exit 2)', async () => {
    const { code, stderr } = await runCli([
      'start',
      '--no-ui',
      '--data-dir',
      dir,
      '--port-dynamodb',
      'eighty',
      '--port-relay',
      '70000',
    ]);
    expect(code).toBe(2);
    expect(stderr).toContain('- --port-dynamodb: expected a port from 0 to 65535');
    expect(stderr).toContain('- --port-relay: expected a port from 0 to 65535');
  });

  it('rejects a bad setting by its flag (exit 2)', async () => {
    const { code, stderr } = await runCli([
      'start',
      '--no-ui',
      '--data-dir',
      dir,
      '--node-monitor-grace-period',
      'fourty',
    ]);
    expect(code).toBe(2);
    expect(stderr).toContain('- --node-monitor-grace-period: expected a duration');
  });

  it('rejects a KUBECONFIG listing several files, and a missing kubeconfig file (exit 2)', async () => {
    const several = await runCli(['start', '--no-ui', '--data-dir', dir], {
      env: { KUBECONFIG: [kubeconfig, kubeconfig].join(delimiter) },
    });
    expect(several.code).toBe(2);
    expect(several.stderr).toContain(
      '- KUBECONFIG: lists several files: pass one with --kubeconfig, or --simulator',
    );
    const missing = await runCli(['start', '--no-ui', '--data-dir', dir, '--kubeconfig', join(dir, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('- --kubeconfig: no such file');
  });
});

describe('nlc start --kubeconfig: the real cluster checked before anything starts', () => {
  it('refuses a kubeconfig it cannot use (exit 2, naming the flag), before any bundling', async () => {
    const garbage = join(dir, 'garbage.kubeconfig');
    await writeFile(garbage, 'clusters: [unclosed\n');
    const { code, stderr } = await runCli(['start', '--no-ui', '--data-dir', dir, '--kubeconfig', garbage]);
    expect(code).toBe(2);
    expect(stderr).toContain(
      `- --kubeconfig: cluster credentials from kubeconfig file ${JSON.stringify(garbage)}`,
    );
  });

  it('refuses a cluster that does not answer GET /version (exit 1), saying nothing was started', async () => {
    const closed = await new Promise<number>((resolvePort) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => {
          resolvePort(port);
        });
      });
    });
    const unreachable = join(dir, 'unreachable.kubeconfig');
    await writeFile(
      unreachable,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:' + String(closed) + '"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
        '',
      ].join('\n'),
    );
    const { code, stderr } = await runCli([
      'start',
      '--no-ui',
      '--data-dir',
      dir,
      '--kubeconfig',
      unreachable,
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `the cluster of ${unreachable} (https://127.0.0.1:${closed}) did not answer GET /version`,
    );
    expect(stderr).toContain('nothing was started');
  });

  it('a cluster that answers: its server and version for the log', async () => {
    const api = await startApiServer({ version: versionInfoOf('1.34') });
    try {
      const file = join(dir, 'sim.kubeconfig');
      await api.writeKubeconfig(file);
      expect(await checkRealCluster(file, undefined)).toEqual({ server: api.url, version: 'v1.34.0' });
    } finally {
      await api.close();
    }
  });
});

describe('nlc start --managed-controller', () => {
  it('refuses what would make two controllers write, or make no sense, naming the flag (exit 2)', async () => {
    const base = ['start', '--no-ui', '--data-dir', dir, '--managed-controller'];
    const real = await runCli([...base, '--kubeconfig', kubeconfig]);
    expect(real.code).toBe(2);
    expect(real.stderr).toContain(
      '- --managed-controller: runs beside the simulator only: a real cluster has its own controller already',
    );
    const active = await runCli([...base, '--dry-run', 'false']);
    expect(active.code).toBe(2);
    expect(active.stderr).toContain(
      "- --dry-run: is false, but beside a managed controller this stack's controller is the shadow and never writes",
    );
    const fromEnv = await runCli(base, { env: { NLC_DRY_RUN: 'false' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('- NLC_DRY_RUN: is false, but beside a managed controller');
    const shadowManaged = await runCli([...base, '--managed-set', 'dryRun=true']);
    expect(shadowManaged.code).toBe(2);
    expect(shadowManaged.stderr).toContain(
      "- --managed-set dryRun: expected false or nothing: the managed controller is the cluster's own, and writes",
    );
  });

  it('names a bad --managed-set by its key, and a malformed one by the flag (exit 2)', async () => {
    const bad = await runCli([
      'start',
      '--no-ui',
      '--data-dir',
      dir,
      '--managed-set',
      'nodeMonitorGracePeriod=fourty',
      '--managed-set',
      'nodeMonitorGracePeriode=40s',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('- --managed-set nodeMonitorGracePeriod: expected a duration');
    expect(bad.stderr).toMatch(/- --managed-set nodeMonitorGracePeriode: unknown .*nodeMonitorGracePeriod/);
    const malformed = await runCli(['start', '--no-ui', '--data-dir', dir, '--managed-set', '40s']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('--managed-set');
    expect(malformed.stderr).toContain('expected key=value');
  });

  it('--managed-set implies --managed-controller and collects its settings', () => {
    expect(managedControllerOf({})).toBeUndefined();
    expect(managedControllerOf({ managedController: true })).toEqual({ settings: {} });
    expect(
      managedControllerOf({ managedSet: ['nodeMonitorGracePeriod=40s', 'emulationVersion=1.33'] }),
    ).toEqual({ settings: { nodeMonitorGracePeriod: '40s', emulationVersion: '1.33' } });
  });
});

describe('chooseKubeconfig', () => {
  it('takes --kubeconfig, else KUBECONFIG, else the simulator; --simulator ignores KUBECONFIG', () => {
    expect(chooseKubeconfig({ kubeconfig }, {})).toBe(kubeconfig);
    expect(chooseKubeconfig({}, { KUBECONFIG: kubeconfig })).toBe(kubeconfig);
    expect(chooseKubeconfig({ simulator: true }, { KUBECONFIG: kubeconfig })).toBeUndefined();
    expect(chooseKubeconfig({}, {})).toBeUndefined();
    expect(chooseKubeconfig({}, { KUBECONFIG: '' })).toBeUndefined();
    expect(() => chooseKubeconfig({}, { KUBECONFIG: join(dir, 'missing') })).toThrow(ConfigError);
  });
});

describe('the port options', () => {
  it('map every --port-* flag to its port', () => {
    for (const name of PortNames) {
      const flag = PortInfo[name].flag;
      const key = flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      expect(PortOptionKeys[name]).toBe(key);
    }
    const options = StartOptionsSchema.parse({ settings: {}, portDynamodb: '0', portRelay: 9000 });
    expect(portsOf(options)).toEqual({ dynamodb: 0, relay: 9000 });
  });
});
