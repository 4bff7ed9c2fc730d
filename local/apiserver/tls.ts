// A self-signed serving certificate for 127.0.0.1 / localhost, made at start with node:crypto (no
// package for X.509 generation is installed, so the DER is built here). TLS is not decoration: kubectl
// (client-go's clientcmd) only reads a kubeconfig's credentials when the server URL is https, so
// over plain http it never sends the bearer token. The certificate doubles as its own CA, which the
// generated kubeconfig carries as certificate-authority-data, so both kubectl and client-node verify it.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

const sequence = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const explicit = (n: number, content: Buffer) => tlv(0xa0 | n, content);

function integer(bytes: Buffer): Buffer {
  const first = bytes[0] ?? 0;
  return tlv(0x02, first >= 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out: number[] = [40 * a + b];
  for (const part of rest) {
    const chunk: number[] = [];
    let v = part;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i] = (chunk[i] ?? 0) | 0x80;
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  return date.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`))
    : tlv(0x18, Buffer.from(`${iso}Z`));
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

export interface ServingCertificate {
  /** PEM certificate (also the CA to trust). */
  readonly cert: string;
  /** PEM PKCS#8 private key. */
  readonly key: string;
}

/** A P-256 self-signed certificate for 127.0.0.1 and localhost, valid from an hour ago for ten years. */
export function selfSignedCertificate(now: Date = new Date()): ServingCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  const name = sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from('nlc-apiserver-simulator')))));
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01; // positive, and minimal (no leading zero octet)
  const notBefore = new Date(now.getTime() - 3_600_000);
  const notAfter = new Date(now.getTime() + 10 * 365 * 86_400_000);
  const subjectAltName = sequence(
    tlv(0x87, Buffer.from([127, 0, 0, 1])),
    tlv(0x82, Buffer.from('localhost')),
  );
  const boolTrue = Buffer.from([0x01, 0x01, 0xff]);
  const extensions = explicit(
    3,
    sequence(
      sequence(oid('2.5.29.17'), tlv(0x04, subjectAltName)),
      sequence(oid('2.5.29.19'), boolTrue, tlv(0x04, sequence(boolTrue))),
      // digitalSignature | keyCertSign
      sequence(oid('2.5.29.15'), boolTrue, tlv(0x04, tlv(0x03, Buffer.from([0x02, 0x84])))),
      // serverAuth
      sequence(oid('2.5.29.37'), tlv(0x04, sequence(oid('1.3.6.1.5.5.7.3.1')))),
    ),
  );
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const certificate = sequence(tbs, ecdsaWithSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return {
    cert: pem('CERTIFICATE', certificate),
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
