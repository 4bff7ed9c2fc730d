// The primitives of the event contracts (events.ts, heartbeatDigestWire.ts): times (RFC 3339 on the
// wire, EpochMillis in the domain; see wireFormat.ts) and names as the API server validates them, so a
// reader never has to cope with anything else; and the message for an unknown schemaVersion.
import { z } from 'zod';
import {
  describeInput,
  formatWireTime,
  isDNS1123Label,
  isDNS1123Subdomain,
  isLabelKey,
  isLabelValue,
  MaxEpochMillis,
  MinEpochMillis,
  parseWireTime,
} from './wireFormat.js';

/** The schemaVersion this build writes and reads (see docs/events.md, "Versioning"). */
export const EventSchemaVersion = 1;

const notADate = (iss: { readonly input?: unknown }): string =>
  `expected an ISO 8601 date, got ${describeInput(iss.input)}`;

export const EpochMillisSchema = z.int().min(MinEpochMillis).max(MaxEpochMillis);
const WireTimeString = z
  .string({ error: notADate })
  .refine((text) => parseWireTime(text) !== undefined, { error: notADate });
/** A time: ISO string on the wire, EpochMillis in the domain. */
export const Time = z.codec(WireTimeString, EpochMillisSchema, {
  decode: (text) => parseWireTime(text) ?? Number.NaN, // always defined: the string was validated
  encode: formatWireTime,
});

export const ClusterName = z.string().refine(isDNS1123Label, {
  error: (iss) => `expected a cluster name (a DNS-1123 label), got ${describeInput(iss.input)}`,
});
export const NodeName = z.string().refine(isDNS1123Subdomain, {
  error: (iss) => `expected a node name (a DNS-1123 subdomain), got ${describeInput(iss.input)}`,
});
export const PodName = z.string().refine(isDNS1123Subdomain, {
  error: (iss) => `expected a pod name (a DNS-1123 subdomain), got ${describeInput(iss.input)}`,
});
export const NamespaceName = z.string().refine(isDNS1123Label, {
  error: (iss) => `expected a namespace (a DNS-1123 label), got ${describeInput(iss.input)}`,
});
export const LabelKey = z.string().refine(isLabelKey, {
  error: (iss) => `expected a label key, got ${describeInput(iss.input)}`,
});
export const LabelValue = z.string().refine(isLabelValue, {
  error: (iss) => `expected a label value, got ${describeInput(iss.input)}`,
});
const notAResourceVersion = (iss: { readonly input?: unknown }): string =>
  `expected a resourceVersion (1 to 64 characters), got ${describeInput(iss.input)}`;
/**
 * Whether a metadata.resourceVersion can go into an event: opaque to clients (etcd's are decimal
 * integers of at most 20 digits), bounded so that a digest naming many silent nodes stays small.
 */
export function isResourceVersion(rv: string): boolean {
  return rv.length >= 1 && rv.length <= 64;
}
/** A metadata.resourceVersion (isResourceVersion). */
export const ResourceVersion = z
  .string({ error: notAResourceVersion })
  .refine(isResourceVersion, { error: notAResourceVersion });
export const NonEmpty = z.string().min(1);
export const NonNegativeInt = z
  .int()
  .min(0, { error: (iss) => `expected an integer >= 0, got ${describeInput(iss.input)}` });

/**
 * The message for a discriminated union whose key matched no option. Typed loosely on purpose: zod's
 * type says only union issues reach it, but a non-object input raises invalid_type through it too.
 */
export function discriminatorError(
  key: string,
  message: (value: unknown) => string,
): (iss: { readonly code?: string; readonly input?: unknown }) => string | undefined {
  return (iss) => {
    if (iss.code !== 'invalid_union') return undefined;
    const input = iss.input;
    return message(typeof input === 'object' && input !== null ? Reflect.get(input, key) : undefined);
  };
}

export const schemaVersionError = discriminatorError('schemaVersion', (version) =>
  version === undefined
    ? `missing: this consumer reads schemaVersion ${EventSchemaVersion}`
    : `unsupported schemaVersion ${describeInput(version)}: this consumer reads schemaVersion ${EventSchemaVersion}`,
);
