// Pieces of the local stack that need no processes: the simulated kubelets' timings for a grace period,
// and the data directory's claim.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDataDir, kubeletTimingsFor } from '../../../../local/stack/stack.js';
import { UPSTREAM_DEFAULTS } from '../../../../shared/config.js';
import { LocalStackStartError } from '../../../../shared/errors.js';

describe('kubeletTimingsFor', () => {
  it("is upstream's kubelet (40 s lease renewed every 10 s, status every 10 s) with upstream's grace period", () => {
    expect(kubeletTimingsFor(UPSTREAM_DEFAULTS)).toEqual({
      nodeLeaseDurationSeconds: 40,
      nodeStatusUpdateFrequency: 10_000,
    });
  });

  it('renews at a quarter of a short grace period, so healthy nodes never look silent', () => {
    expect(kubeletTimingsFor({ ...UPSTREAM_DEFAULTS, nodeMonitorGracePeriod: 4_000 })).toEqual({
      nodeLeaseDurationSeconds: 4,
      nodeStatusUpdateFrequency: 1_000,
    });
  });

  it('takes what it is given over the derived values', () => {
    expect(
      kubeletTimingsFor(UPSTREAM_DEFAULTS, { nodeLeaseDurationSeconds: 8, podTerminationDelay: 0 }),
    ).toEqual({
      nodeLeaseDurationSeconds: 8,
      nodeStatusUpdateFrequency: 10_000,
      podTerminationDelay: 0,
    });
  });
});

describe('claimDataDir', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nlc-claim-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes its pid and removes it on release', async () => {
    const release = await claimDataDir(dir);
    expect(await readFile(join(dir, 'stack.pid'), 'utf8')).toBe(`${process.pid}\n`);
    await release();
    await expect(readFile(join(dir, 'stack.pid'), 'utf8')).rejects.toThrow();
  });

  it('refuses a directory a running process holds, and takes over a stale claim', async () => {
    await writeFile(join(dir, 'stack.pid'), `${process.ppid}\n`);
    await expect(claimDataDir(dir)).rejects.toThrow(LocalStackStartError);
    await expect(claimDataDir(dir)).rejects.toThrow(/in use by another local stack \(pid \d+\)/);
    await writeFile(join(dir, 'stack.pid'), '2147483646\n');
    const release = await claimDataDir(dir);
    await release();
  });
});
