// Heartbeat Digest size for realistic clusters, by encoding (docs/events.md, "Size"). Deterministic:
//   npx tsx bench/digestSize.ts
// EventBridge bills custom events per 64 KB chunk of the entry (putEventsEntrySize).
import { gzipSync } from 'node:zlib';
import {
  encodeDetail,
  formatWireTime,
  HeartbeatDigestDetailType,
  RelaySource,
  utf8Bytes,
} from '../shared/events.js';
import type { HeartbeatDigest } from '../shared/events.js';
import { DefaultDigestPartMaxBytes, splitDigest } from '../shared/heartbeatDigest.js';

const observedAt = Date.parse('2026-11-21T10:00:00.000Z');
const chunk = 64 * 1024;
const digestsPerMonth = (30 * 86_400) / 5; // one every nodeMonitorPeriod (5 s)
const usdPerMillionChunks = 1.0; // EventBridge custom events, list price

/** Distinct EC2-style names in 10.0.0.0/16, ages uniform in [0, 10 s) (lease renewal period). */
function cluster(nodes: number, seed = 42): Map<string, number> {
  let x = seed;
  // xorshift32: deterministic, full period, no floating-point overflow.
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>>= 0);
  };
  const probes = new Map<string, number>();
  while (probes.size < nodes) {
    const ip = next() % 65_536;
    probes.set(`ip-10-0-${ip >> 8}-${ip & 255}.eu-west-1.compute.internal`, observedAt - (next() % 10_000));
  }
  return probes;
}

/** A fingerprint per node (six base64url characters, as shared/nodeFingerprint.ts writes them). */
function fingerprintsOf(probes: Map<string, number>): Map<string, string> {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let x = 7;
  const char = (): string => {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    return alphabet[x % 64] ?? 'A';
  };
  return new Map([...probes.keys()].map((name) => [name, Array.from({ length: 6 }, char).join('')]));
}

function digest(probes: Map<string, number>): HeartbeatDigest {
  return {
    schemaVersion: 1,
    cluster: 'prod-eu-west-1',
    relayId: 'nlc-relay-6f9c7d8b5-x2k4q',
    leaderSince: observedAt - 86_400_000,
    observingSince: observedAt - 86_400_000,
    sequence: 17_280,
    observedAt,
    part: { index: 0, count: 1 },
    probes,
  };
}

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
for (const nodes of [1_000, 5_000, 20_000]) {
  const d = digest(cluster(nodes));
  const ours = JSON.stringify(encodeDetail({ detailType: HeartbeatDigestDetailType, detail: d }));
  const { probeAges, fingerprints: _none, ...head } = JSON.parse(ours) as Record<string, unknown>;
  const withFingerprints = JSON.stringify(
    encodeDetail({
      detailType: HeartbeatDigestDetailType,
      detail: { ...d, fingerprints: fingerprintsOf(d.probes) },
    }),
  );
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
    [
      'v1 probeAges gzip + base64 (not used)',
      { probeAgesGzip: gzipSync(JSON.stringify(probeAges)).toString('base64') },
    ],
  ];
  for (const [label, probes] of variants)
    console.log(row(label, nodes, JSON.stringify({ ...head, ...(probes as object) })));
  // What the relay sends: the probes and, per node, the fingerprint of its copy (docs/architecture.md#level-triggered).
  console.log(row('**v1 with `fingerprints` (as sent)**', nodes, withFingerprints));
  const parts = splitDigest({ ...d, fingerprints: fingerprintsOf(d.probes) }, DefaultDigestPartMaxBytes);
  console.log(
    `|  v1 parts at ${DefaultDigestPartMaxBytes.toLocaleString('en-US')} bytes | ${nodes.toLocaleString('en-US')} | ${parts.length} part(s) | | | | |`,
  );
}
