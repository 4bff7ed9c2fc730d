// The relay process (relay/main.ts): runRelay's HTTP endpoints, and the real entry point in a child
// process: events printed to stdout when no bus is configured, leader election in a pod, and SIGTERM
// releasing the Lease before a clean exit.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startApiServer } from '../../../local/apiserver/index.js';
import { VirtualScheduler } from '../../../local/virtualScheduler.js';
import { main, runRelay, type RunningRelay } from '../../../relay/main.js';
import { ClusterAuthError } from '../../../shared/errors.js';
import { everythingSaid } from '../../helpers/secretLeaks.js';
import {
  createNode,
  MemoryLogger,
  RecordingSink,
  RelayNamespace,
  type Sim,
  startSim,
  waitFor,
  waitForSync,
} from './helpers.js';

vi.setConfig({ testTimeout: 60_000 });

const repo = fileURLToPath(new URL('../../../', import.meta.url));
let sim: Sim | undefined;
let running: RunningRelay | undefined;
let child: ChildProcess | undefined;
let dir: string | undefined;

afterEach(async () => {
  await running?.stop();
  running = undefined;
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  await sim?.api.close();
  sim = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function kubeconfigFile(s: Sim): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'nlc-relay-'));
  const path = join(dir, 'kubeconfig');
  await s.api.writeKubeconfig(path);
  return path;
}

async function get(url: string): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

describe('runRelay', () => {
  it('serves /healthz, /readyz once the informers synced, and /metrics with the nlc_relay_ metrics', async () => {
    const s = (sim = await startSim());
    createNode(s, 'node-a');
    const sink = new RecordingSink(s.scheduler);
    // The first list of nodes waits until the test lets it go, so /readyz can be seen not ready.
    let release: () => void = () => undefined;
    const removeDelay = s.api.faults.inject({
      kind: 'delay',
      until: new Promise<void>((resolve) => {
        release = resolve;
      }),
      match: { verb: 'list', resource: 'nodes' },
      times: 1,
    });
    running = await runRelay({
      env: { NLC_CLUSTER: 'test' },
      kubeconfig: await kubeconfigFile(s),
      port: 0,
      host: '127.0.0.1',
      leaderElect: false,
      sink,
      scheduler: s.scheduler,
      logger: new MemoryLogger(),
    });
    const { url } = running.http;

    expect(await get(`${url}/healthz`)).toMatchObject({ status: 200, body: 'ok\n' });
    const notReady = await get(`${url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(JSON.parse(notReady.body)).toMatchObject({ ready: false });

    release();
    removeDelay();
    await waitForSync(running.relay);
    await waitFor(
      s,
      () => sink.nodeChanges().length === 1 && sink.digests().length === 1,
      'the first events',
    );
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({
      ready: true,
      leader: true,
      informers: [
        { resource: 'leases', synced: true, objects: 1 },
        { resource: 'nodes', synced: true, objects: 1 },
        { resource: 'pods', synced: true, objects: 0 },
      ],
    });

    const metrics = await get(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain/);
    for (const line of [
      'nlc_relay_events_sent_total{detail_type="Node Changed"} 1',
      'nlc_relay_events_sent_total{detail_type="Heartbeat Digest"} 1',
      'nlc_relay_is_leader 1',
      'nlc_relay_digest_nodes 1', // the node's baseline, probed at observingSince
    ]) {
      expect(metrics.body).toContain(line);
    }
    for (const name of [
      'nlc_relay_events_failed_total',
      'nlc_relay_events_retried_total',
      'nlc_relay_watch_restarts_total',
      'nlc_relay_digest_bytes',
      'nlc_relay_publish_lag_seconds_bucket',
    ]) {
      expect(metrics.body).toContain(`# TYPE ${name.replace(/_bucket$/, '')} `);
    }
    expect((await get(`${url}/nope`)).status).toBe(404);
  });
});

describe('the HTTP endpoints', () => {
  it('listen on 127.0.0.1 unless NLC_RELAY_HOST (or --host) names another address', async () => {
    const s = (sim = await startSim());
    const kubeconfig = await kubeconfigFile(s);
    const start = (env: Record<string, string>) =>
      runRelay({
        env: { NLC_CLUSTER: 'test', ...env },
        kubeconfig,
        port: 0,
        leaderElect: false,
        sink: new RecordingSink(s.scheduler),
        scheduler: s.scheduler,
        logger: new MemoryLogger(),
      });
    running = await start({});
    expect(running.http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await running.stop();
    // What infra/relay/deployment.yaml sets, so the kubelet's probes and Prometheus reach the pod.
    running = await start({ NLC_RELAY_HOST: '0.0.0.0' });
    expect(running.http.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    expect((await get(`http://127.0.0.1:${running.http.port}/healthz`)).status).toBe(200);
  });
});

describe('relay/main.ts', () => {
  it('prints events to stdout without a bus, leads in a pod, and on SIGTERM releases the Lease and exits 0', async () => {
    // The child runs on the system clock; so does this simulator.
    const api = await startApiServer();
    const s = (sim = { api, scheduler: new VirtualScheduler(Date.now()) });
    api.store.namespaces.create({ metadata: { name: RelayNamespace } });
    createNode(s, 'node-a');
    const kubeconfig = await kubeconfigFile(s);

    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', 'relay/main.ts', '--kubeconfig', kubeconfig, '--port', '0', '--host', '127.0.0.1'],
      {
        cwd: repo,
        env: {
          ...process.env,
          NLC_CLUSTER: 'test',
          NLC_NODE_MONITOR_PERIOD: '1s',
          POD_NAME: 'nlc-relay-7d9f6-x2k4q',
          POD_NAMESPACE: RelayNamespace,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = proc;
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => {
      proc.on('exit', (code) => {
        resolve(code);
      });
    });

    const events = () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map(
          (line) =>
            JSON.parse(line) as { source: string; 'detail-type': string; detail: Record<string, unknown> },
        );
    const holder = () => {
      try {
        return api.store.leases.get('nlc-relay', { namespace: RelayNamespace }).spec?.holderIdentity;
      } catch {
        return undefined;
      }
    };
    const deadline = Date.now() + 40_000;
    while (!(
      holder() === 'nlc-relay-7d9f6-x2k4q' && events().some((e) => e['detail-type'] === 'Heartbeat Digest')
    )) {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`relay did not start:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(events()).toContainEqual(
      expect.objectContaining({
        source: 'nlc.relay',
        'detail-type': 'Node Changed',
        detail: expect.objectContaining({ cluster: 'test', type: 'ADDED' }) as unknown,
      }),
    );
    expect(events().find((e) => e['detail-type'] === 'Heartbeat Digest')?.detail).toMatchObject({
      relayId: 'nlc-relay-7d9f6-x2k4q',
      sequence: 0,
    });

    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(api.store.leases.get('nlc-relay', { namespace: RelayNamespace }).spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
    });
    expect(stderr).toContain('"message":"released the leader election lease"');
  });
});

describe('a malformed kubeconfig', () => {
  const token = 'tok-8c1e5a9d7b3f2a6e4d0c9b8a7f6e5d4c';
  const malformed = `users:\n- name: u\n  user:\n    token: ${token}\n   bad: indentation\n`;

  it('given by --kubeconfig: exit 1 with one line on stderr that names the file and not the token', async () => {
    dir = await mkdtemp(join(tmpdir(), 'nlc-relay-'));
    const path = join(dir, 'kubeconfig');
    await writeFile(path, malformed);
    let stderr = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr += String(chunk);
      return true;
    });
    let code: number;
    try {
      code = await main([
        'node',
        'relay/main.ts',
        '--kubeconfig',
        path,
        '--port',
        '0',
        '--host',
        '127.0.0.1',
      ]);
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^cluster credentials from kubeconfig file ".*kubeconfig": not a readable kubeconfig \(YAMLException: bad indentation/,
    );
    expect(stderr).not.toContain(token.slice(0, 12));
  });

  it("found through KUBECONFIG (client-node's default): a ClusterAuthError without the token", async () => {
    dir = await mkdtemp(join(tmpdir(), 'nlc-relay-'));
    const path = join(dir, 'kubeconfig');
    await writeFile(path, malformed);
    vi.stubEnv('KUBECONFIG', path);
    try {
      const error: unknown = await runRelay({ env: {}, port: 0, host: '127.0.0.1' }).then(
        () => new Error('expected a failure'),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ClusterAuthError);
      expect(everythingSaid(error)).not.toContain(token.slice(0, 12));
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
