// Heartbeat Digest size for realistic clusters, by encoding (docs/events.md, "Size"). Deterministic:
//   npx tsx bench/digestSize.ts
// EventBridge bills custom events per 64 KB chunk of the entry (putEventsEntrySize).
import {
  encodeDetail,
  formatWireTime,
  HeartbeatDigestDetailType,
  RelaySource,
  utf8Bytes,
  type HeartbeatDigest,
} from '../shared/events.js';
import {
  DefaultDigestEntryMaxBytes,
  DigestEntryOverheadBytes,
  fitDigest,
} from '../shared/heartbeatDigest.js';
import { digestWireForms } from '../shared/heartbeatDigestWire.js';
import { PutEventsMaxBytes } from '../shared/adapters/eventbridge/putEvents.js';
import { clusterDigest, clusterProbes, fingerprintsOf, observedAt } from './digestFixtures.js';

const chunk = 64 * 1024;
const digestsPerMonth = (30 * 86_400) / 5; // one every nodeMonitorPeriod (5 s)
const usdPerMillionChunks = 1.0; // EventBridge custom events, list price

function entryBytes(detail: string): number {
  return utf8Bytes(RelaySource) + utf8Bytes(HeartbeatDigestDetailType) + utf8Bytes(detail);
}

function row(label: string, nodes: number, detail: string): string {
  const bytes = entryBytes(detail);
  const chunks = Math.ceil(bytes / chunk);
  const usd = (digestsPerMonth * chunks * usdPerMillionChunks) / 1e6;
  return `| ${label} | ${nodes.toLocaleString('en-US')} | ${bytes.toLocaleString('en-US')} | ${(bytes / nodes).toFixed(1)} | ${chunks} | ${usd.toFixed(2)} | ${((usd * 1000) / nodes).toFixed(3)} |`;
}

console.log(
  '| encoding | nodes | entry bytes | bytes/node | 64 KB chunks | US$/month | US$/1,000 nodes/month |',
);
console.log('|---|---|---|---|---|---|---|');
const json = (digest: HeartbeatDigest): string =>
  JSON.stringify(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: digest }));

for (const nodes of [1_000, 5_000, 20_000, 100_000]) {
  const probes = clusterProbes(nodes);
  const d = clusterDigest(probes);
  const ours = json(d);
  const { probeAges, ...head } = JSON.parse(ours) as Record<string, unknown>;
  const ages = [...d.probes].map(([name, t]) => [name, observedAt - t] as const);
  const byDomain: Record<string, Record<string, number>> = {};
  for (const [name, age] of ages) {
    const dot = name.indexOf('.');
    (byDomain[name.slice(dot + 1)] ??= {})[name.slice(0, dot)] = age;
  }
  const variants: [string, unknown][] = [
    [
      'absolute ISO times, flat',
      { probes: Object.fromEntries([...d.probes].map(([n, t]) => [n, formatWireTime(t)])) },
    ],
    ['ages (ms), flat', { probeAges: Object.fromEntries(ages) }],
    ['ages (ms), by domain', { probeAges: byDomain }],
    ['**ages (ms), by domain, prefix, suffix (v1)**', { probeAges }],
  ];
  for (const [label, probes] of variants)
    console.log(row(label, nodes, JSON.stringify({ ...head, ...(probes as object) })));
  console.log(row('v1 `packed`, no fingerprints', nodes, json({ ...d, packed: true })));
  // What the relay sends: the probes and, per node, the fingerprint of its copy (docs/architecture.md#level-triggered).
  const whole = clusterDigest(probes, fingerprintsOf(probes.keys()));
  const forms = digestWireForms(whole);
  if (forms === undefined) throw new Error('the bench digest does not encode');
  console.log(row('**v1 with `fingerprints`**', nodes, JSON.stringify(forms.plain().wire)));
  console.log(row('v1 `packed` with `fingerprints`', nodes, JSON.stringify(forms.packed()?.wire)));
  console.log(
    row(
      'v1 `packed`, `fingerprints` of 1 shard of 2',
      nodes,
      JSON.stringify(forms.sharded({ index: 0, count: 2 })?.wire),
    ),
  );
  for (const entryMax of [DefaultDigestEntryMaxBytes, PutEventsMaxBytes]) {
    const { parts, bytes } = fitDigest(whole, entryMax - DigestEntryOverheadBytes);
    const [first] = parts;
    const shard = first?.fingerprintShard;
    const form = `${first?.packed === true ? 'packed' : 'plain'}${shard === undefined ? '' : `, fingerprints 1/${shard.count}`}`;
    console.log(
      `| **as sent, entries up to ${entryMax.toLocaleString('en-US')} bytes** | ${nodes.toLocaleString('en-US')} | ${(bytes + parts.length * DigestEntryOverheadBytes).toLocaleString('en-US')} | ${form}: ${parts.length === 1 ? '1 entry' : `${parts.length} parts`} | | | |`,
    );
  }
}
