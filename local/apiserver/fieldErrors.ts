// field.Error constructors and the name/label rules of k8s.io/apimachinery/pkg/util/validation, with
// upstream's exact messages: clients and tests match on them (e.g. "Unsupported value: \"Bad\":
// supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"").
import type { FieldError } from './status.js';

/** A value printed as Go's %#v would print it (structs); passed through verbatim. */
export class GoRepr {
  constructor(readonly repr: string) {}
}

type BadValue = string | number | boolean | null | undefined | GoRepr;

/** The value part of upstream's field.Error.ErrorBody(). */
function formatValue(value: BadValue): string {
  if (value instanceof GoRepr) return value.repr;
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

function withDetail(body: string, detail: string): string {
  return detail === '' ? body : `${body}: ${detail}`;
}

export function required(field: string, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field, message: withDetail('Required value', detail) };
}

export function invalid(field: string, value: BadValue, detail: string): FieldError {
  return {
    type: 'FieldValueInvalid',
    field,
    message: withDetail(`Invalid value: ${formatValue(value)}`, detail),
  };
}

export function notSupported(field: string, value: BadValue, valid: readonly string[]): FieldError {
  const supported = valid.map((v) => JSON.stringify(v)).join(', ');
  return {
    type: 'FieldValueNotSupported',
    field,
    message: withDetail(`Unsupported value: ${formatValue(value)}`, `supported values: ${supported}`),
  };
}

export function duplicate(field: string, value: BadValue, detail = ''): FieldError {
  return {
    type: 'FieldValueDuplicate',
    field,
    message: withDetail(`Duplicate value: ${formatValue(value)}`, detail),
  };
}

export function forbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, message: withDetail('Forbidden', detail) };
}

/** Path helpers in upstream's field.Path notation: `spec.taints[0].key`, `metadata.labels[app]`. */
export function childPath(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}
export function indexPath(path: string, i: number | string): string {
  return `${path}[${i}]`;
}

// --- k8s.io/apimachinery/pkg/util/validation -------------------------------------------------------

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let s = `${msg} (e.g. `;
  examples.forEach((example, i) => {
    if (i > 0) s += ' or ';
    s += `'${example}', `;
  });
  return `${s}regex used for validation is '${fmt}')`;
}

const maxLenError = (n: number) => `must be no more than ${n} characters`;
const emptyError = 'must be non-empty';

const qnameCharFmt = '[A-Za-z0-9]';
const qnameExtCharFmt = '[-A-Za-z0-9_.]';
const qualifiedNameFmt = `(${qnameCharFmt}${qnameExtCharFmt}*)?${qnameCharFmt}`;
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const qualifiedNameRegexp = new RegExp(`^${qualifiedNameFmt}$`);
const qualifiedNameMaxLength = 63;

const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueRegexp = new RegExp(`^${labelValueFmt}$`);
const labelValueMaxLength = 63;

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123LabelRegexp = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123LabelMaxLength = 63;

const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainRegexp = new RegExp(`^${dns1123SubdomainFmt}$`);
const dns1123SubdomainMaxLength = 253;

/** upstream IsDNS1123Label. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > dns1123LabelMaxLength) errs.push(maxLenError(dns1123LabelMaxLength));
  if (!dns1123LabelRegexp.test(value)) {
    errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

/** upstream IsDNS1123Subdomain. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > dns1123SubdomainMaxLength) errs.push(maxLenError(dns1123SubdomainMaxLength));
  if (!dns1123SubdomainRegexp.test(value)) {
    errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  }
  return errs;
}

/** upstream IsQualifiedName: label keys, taint and toleration keys. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push(`prefix part ${emptyError}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((msg) => `prefix part ${msg}`));
  } else {
    return [
      `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError}`);
  else if (name.length > qualifiedNameMaxLength)
    errs.push(`name part ${maxLenError(qualifiedNameMaxLength)}`);
  if (!qualifiedNameRegexp.test(name)) {
    errs.push(
      `name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`,
    );
  }
  return errs;
}

/** upstream IsValidLabelValue. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > labelValueMaxLength) errs.push(maxLenError(labelValueMaxLength));
  if (!labelValueRegexp.test(value)) {
    errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

/** upstream path.IsValidPathSegmentName: what any object name must satisfy (events use only this). */
export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errs: string[] = [];
  for (const illegal of ['/', '%']) {
    if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  }
  return errs;
}

export type NameRule = 'dns1123Subdomain' | 'dns1123Label' | 'pathSegment';

/** upstream ValidateNameFunc: with prefix (generateName), a trailing dash is allowed. */
export function validateName(rule: NameRule, name: string, prefix: boolean): string[] {
  const masked = prefix && name.endsWith('-') ? `${name.slice(0, -1)}a` : name;
  switch (rule) {
    case 'dns1123Subdomain':
      return isDNS1123Subdomain(masked);
    case 'dns1123Label':
      return isDNS1123Label(masked);
    case 'pathSegment':
      return isValidPathSegmentName(name);
  }
}

/** upstream ValidateLabelName: one Invalid per message. */
export function validateLabelName(name: string, field: string): FieldError[] {
  return isQualifiedName(name).map((msg) => invalid(field, name, msg));
}

/** upstream ValidateLabels. */
export function validateLabels(labels: Record<string, string>, field: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels)) {
    errs.push(...validateLabelName(k, field));
    errs.push(...isValidLabelValue(v).map((msg) => invalid(field, v, msg)));
  }
  return errs;
}
