// What a Heartbeat Digest costs in CPU (docs/events.md, "Size"): the relay fitting it into entries
// (fitDigest: encode, measure, pack, shard or split) and a function decoding what it receives (JSON.parse
// and parseHeartbeatDigest of every part). Every round builds a new digest of the same nodes, as the
// relay does every 5 s. CPU time of the process (process.cpuUsage: garbage collection included), the
// median of the rounds after two to warm up.
//   npx tsx bench/digestCpu.ts [--nodes 1000,5000,20000,100000] [--rounds 9]
import { parseArgs } from 'node:util';
import { encodeDetail, HeartbeatDigestDetailType, parseHeartbeatDigest } from '../shared/events.js';
import {
  DefaultDigestEntryMaxBytes,
  DigestEntryOverheadBytes,
  fitDigest,
} from '../shared/heartbeatDigest.js';
import { PutEventsMaxBytes } from '../shared/adapters/eventbridge/putEvents.js';
import { clusterDigest, clusterProbes, fingerprintsOf } from './digestFixtures.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1000,5000,20000,100000' },
    rounds: { type: 'string', default: '9' },
  },
});
const sizes = values.nodes.split(',').map(Number);
const rounds = Number(values.rounds);

function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

console.log(
  '| nodes | entry limit | sent as | detail bytes | relay: fitDigest (CPU ms) | functions: decode (CPU ms) |',
);
console.log('|---|---|---|---|---|---|');
for (const nodes of sizes) {
  const probes = clusterProbes(nodes);
  const fingerprints = fingerprintsOf(probes.keys());
  for (const entryMax of [DefaultDigestEntryMaxBytes, PutEventsMaxBytes]) {
    const fit: number[] = [];
    const decode: number[] = [];
    let shape = '';
    let bytes = 0;
    for (let round = 0; round < rounds + 2; round++) {
      const digest = clusterDigest(probes, fingerprints);
      let fitted: ReturnType<typeof fitDigest> | undefined;
      const fitCpu = cpuMs(() => {
        fitted = fitDigest(digest, entryMax - DigestEntryOverheadBytes);
      });
      const parts = fitted?.parts ?? [];
      // What the bus delivers: the JSON the relay sent.
      const sent = parts.map((part) =>
        JSON.stringify(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: part })),
      );
      const decodeCpu = cpuMs(() => {
        for (const detail of sent) parseHeartbeatDigest(JSON.parse(detail));
      });
      if (round >= 2) {
        fit.push(fitCpu);
        decode.push(decodeCpu);
      }
      const first = parts[0];
      const shard = first?.fingerprintShard;
      shape = `${parts.length === 1 ? '1 entry' : `${parts.length} parts`}, ${first?.packed === true ? 'packed' : 'plain'}${shard === undefined ? '' : `, fingerprints 1/${shard.count}`}`;
      bytes = fitted?.bytes ?? 0;
    }
    console.log(
      `| ${nodes.toLocaleString('en-US')} | ${entryMax.toLocaleString('en-US')} | ${shape} | ${bytes.toLocaleString('en-US')} | ${median(fit).toFixed(0)} | ${median(decode).toFixed(0)} |`,
    );
  }
}
