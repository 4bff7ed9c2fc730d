// `nlc relay`: the real relay (relay/main.ts runRelay) against the Kubernetes API simulator over HTTPS,
// events printed to stdout (no bus), stopped by its signal; and its flags validated by the relay's own
// settings, reported by flag.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRelayCommand, type StartRelay } from '../../../cli/commands/relay.js';
import type { CliIo } from '../../../shared/present/output.js';
import { startApiServer, type ApiServerHandle } from '../../../local/apiserver/index.js';
import { runRelay } from '../../../relay/main.js';
import { runCli } from './helpers.js';

let api: ApiServerHandle;
let dir: string;
let kubeconfig: string;
beforeAll(async () => {
  api = await startApiServer();
  dir = await mkdtemp(join(tmpdir(), 'nlc-cli-relay-'));
  kubeconfig = join(dir, 'kubeconfig.yaml');
  await api.writeKubeconfig(kubeconfig);
  api.store.nodes.create({
    metadata: {
      name: 'a-1',
      labels: { 'topology.kubernetes.io/region': 'region1', 'topology.kubernetes.io/zone': 'zone-a' },
    },
  });
});
afterAll(async () => {
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

/** Polls `condition` every 20 ms for up to 30 s (a generous bound, not a timing assertion). */
async function eventually(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(condition()).toBe(true);
}

describe('nlc relay', () => {
  it('publishes the cluster to stdout until stopped, then exits 0; its endpoints on 127.0.0.1 by default', async () => {
    let stdout = '';
    const io: CliIo = {
      stdout: { write: (chunk: string) => (stdout += chunk) },
      stderr: { write: () => true },
      env: {},
      clock: { now: () => Date.now() },
    };
    const stop = new AbortController();
    let url = '';
    const start: StartRelay = async (options) => {
      const running = await runRelay(options);
      url = running.http.url;
      return running;
    };
    const exit = runRelayCommand({ kubeconfig, cluster: 'dev', port: 0 }, io, stop.signal, start);
    await eventually(() => stdout.includes('"detail-type":"Node Changed"'));
    const event = stdout
      .split('\n')
      .filter((line) => line.includes('"detail-type":"Node Changed"'))
      .map(
        (line) => JSON.parse(line) as { source: string; detail: { cluster: string; node: { name: string } } },
      )[0];
    expect(event).toMatchObject({ source: 'nlc.relay', detail: { cluster: 'dev', node: { name: 'a-1' } } });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    stop.abort();
    expect(await exit).toBe(0);
  });

  it('exits 2 naming the flags whose values the relay rejects', async () => {
    const { code, stderr } = await runCli([
      'relay',
      '--cluster',
      'Bad_Name',
      '--bus',
      'no spaces',
      '--port',
      '0',
    ]);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^error: Invalid configuration \(2 problems\):\n- --cluster: .*\n- --bus: expected an EventBridge bus name or ARN\n$/,
    );
    const host = await runCli(['relay', '--host', 'relay.example', '--port', '0']);
    expect(host).toMatchObject({
      code: 2,
      stderr:
        'error: Invalid configuration (1 problem):\n- --host: expected an IP address such as 127.0.0.1 or 0.0.0.0\n',
    });
    const port = await runCli(['relay', '--port', '70000']);
    expect(port).toMatchObject({
      code: 2,
      stderr: 'error: Invalid options (1 problem):\n- --port: expected a port from 0 to 65535\n',
    });
  });
});
