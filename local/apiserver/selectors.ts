// Label selectors (k8s.io/apimachinery/pkg/labels Parse) and field selectors (pkg/fields
// ParseSelector) as list and watch requests carry them. A selector that does not parse is a 400, as on
// a real server; a field selector naming a field the kind does not index is a 400 too.
import { isValidLabelValue, isQualifiedName } from './fieldErrors.js';
import { badRequest } from './status.js';

export type LabelOperator = 'Exists' | 'DoesNotExist' | 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Gt' | 'Lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

export type LabelSelector = readonly LabelRequirement[];

type Token =
  | { kind: 'identifier'; text: string }
  | { kind: 'op'; text: '!' | '=' | '==' | '!=' | '>' | '<' | '(' | ')' | ',' };

const special = new Set(['!', '=', '>', '<', '(', ')', ',']);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input.charAt(i);
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (special.has(c)) {
      const two = input.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        tokens.push({ kind: 'op', text: two });
        i += 2;
      } else {
        tokens.push({ kind: 'op', text: c as '!' | '=' | '>' | '<' | '(' | ')' | ',' });
        i++;
      }
      continue;
    }
    let j = i;
    while (j < input.length && !special.has(input.charAt(j)) && !/\s/.test(input.charAt(j))) j++;
    tokens.push({ kind: 'identifier', text: input.slice(i, j) });
    i = j;
  }
  return tokens;
}

function describe(token: Token | undefined): string {
  return token === undefined ? 'end of string' : token.text;
}

/** Parses a label selector string; throws a 400 ApiStatusError when it does not parse. */
export function parseLabelSelector(input: string): LabelSelector {
  const tokens = tokenize(input);
  const requirements: LabelRequirement[] = [];
  let pos = 0;
  const peek = () => tokens[pos];
  const fail = (msg: string): never => {
    throw badRequest(`unable to parse requirement: ${msg}`);
  };
  const identifier = (what: string): string => {
    const token = tokens[pos];
    if (token?.kind !== 'identifier') return fail(`found '${describe(token)}', expected: ${what}`);
    pos++;
    return token.text;
  };
  const validateKey = (key: string) => {
    const errs = isQualifiedName(key);
    if (errs.length > 0) fail(`Invalid value: ${JSON.stringify(key)}: ${errs.join('; ')}`);
  };
  const validateValue = (value: string) => {
    const errs = isValidLabelValue(value);
    if (errs.length > 0) fail(`Invalid value: ${JSON.stringify(value)}: ${errs.join('; ')}`);
  };

  if (tokens.length === 0) return [];
  for (;;) {
    let token = peek();
    if (token?.kind === 'op' && token.text === '!') {
      pos++;
      const key = identifier('identifier');
      validateKey(key);
      requirements.push({ key, operator: 'DoesNotExist', values: [] });
    } else {
      const key = identifier("!, identifier, or 'end of string'");
      validateKey(key);
      token = peek();
      if (token === undefined || (token.kind === 'op' && token.text === ',')) {
        requirements.push({ key, operator: 'Exists', values: [] });
      } else if (token.kind === 'identifier' && (token.text === 'in' || token.text === 'notin')) {
        pos++;
        const open = tokens[pos];
        if (open?.kind !== 'op' || open.text !== '(') fail(`found '${describe(open)}', expected: '('`);
        pos++;
        const values: string[] = [];
        // An empty value between commas (or before ')') is the empty string, as upstream's parser allows.
        let expectValue = true;
        for (;;) {
          const next = tokens[pos];
          if (next?.kind === 'identifier' && expectValue) {
            validateValue(next.text);
            values.push(next.text);
            expectValue = false;
          } else if (next?.kind === 'op' && next.text === ',') {
            if (expectValue) values.push('');
            expectValue = true;
          } else if (next?.kind === 'op' && next.text === ')') {
            if (expectValue && values.length > 0) values.push('');
            pos++;
            break;
          } else {
            fail(`found '${describe(next)}', expected: ',', ')' or identifier`);
          }
          pos++;
        }
        if (values.length === 0) fail("for 'in', 'notin' operators, values set can't be empty");
        requirements.push({ key, operator: token.text === 'in' ? 'In' : 'NotIn', values });
      } else if (token.kind === 'op' && ['=', '==', '!=', '>', '<'].includes(token.text)) {
        pos++;
        const next = tokens[pos];
        let value = '';
        if (next?.kind === 'identifier') {
          value = next.text;
          pos++;
        }
        if (token.text === '>' || token.text === '<') {
          if (!/^-?\d+$/.test(value)) fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
          requirements.push({ key, operator: token.text === '>' ? 'Gt' : 'Lt', values: [value] });
        } else {
          validateValue(value);
          requirements.push({ key, operator: token.text === '!=' ? 'NotEquals' : 'Equals', values: [value] });
        }
      } else {
        fail(`found '${describe(token)}', expected: in, notin, =, ==, !=, gt, lt`);
      }
    }
    const separator = peek();
    if (separator === undefined) break;
    if (separator.kind === 'op' && separator.text === ',') {
      pos++;
      continue;
    }
    fail(`found '${describe(separator)}', expected: ',' or 'end of string'`);
  }
  return requirements;
}

export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return selector.every(({ key, operator, values }) => {
    const has = Object.hasOwn(labels, key);
    const value = labels[key];
    switch (operator) {
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      case 'Equals':
      case 'In':
        return has && values.includes(value ?? '');
      case 'NotEquals':
      case 'NotIn':
        return !has || !values.includes(value ?? '');
      case 'Gt':
      case 'Lt': {
        if (!has || !/^-?\d+$/.test(value ?? '')) return false;
        const n = Number(value);
        const bound = Number(values[0]);
        return operator === 'Gt' ? n > bound : n < bound;
      }
    }
  });
}

export interface FieldRequirement {
  readonly field: string;
  readonly operator: 'Equals' | 'NotEquals';
  readonly value: string;
}

export type FieldSelector = readonly FieldRequirement[];

/** upstream fields.ParseSelector: `a=b,c!=d`, `==` allowed, backslash escapes `,`, `=`, `!` and `\`. */
export function parseFieldSelector(input: string, supported: ReadonlySet<string>): FieldSelector {
  if (input.trim() === '') return [];
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i++) {
    const c = input.charAt(i);
    if (c === '\\' && i + 1 < input.length) {
      current += c + input.charAt(i + 1);
      i++;
    } else if (c === ',') {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  const unescape = (s: string) => s.replace(/\\(.)/g, '$1');
  return parts.map((part) => {
    const m = /^(.*?)(!=|==|=)(.*)$/.exec(part);
    if (m === null) throw badRequest(`invalid selector: '${input}'; can't understand '${part}'`);
    const [, field = '', op, value = ''] = m;
    const name = field.trim();
    if (!supported.has(name)) throw badRequest(`field label not supported: ${name}`);
    return { field: name, operator: op === '!=' ? 'NotEquals' : 'Equals', value: unescape(value) };
  });
}

export function matchesFields(selector: FieldSelector, fields: (field: string) => string): boolean {
  return selector.every(({ field, operator, value }) =>
    operator === 'Equals' ? fields(field) === value : fields(field) !== value,
  );
}
