// DynamoDB's expression language: condition (and filter) expressions, key conditions, update and
// projection expressions, parsed once per distinct text (a store sends the same few texts with
// different placeholders) and evaluated against items in wire form. Names and values stay
// placeholders in the tree and are resolved per request, so a parse is shared by every request that
// sends the same text.
import {
  addNumbers,
  checkedCopy,
  compareValues,
  setMembers,
  setOf,
  typeOf,
  ValueError,
  valuesEqual,
  type Item,
  type Value,
} from './values.js';

/** An expression DynamoDB would refuse: the message says what and where. */
export class ExpressionError extends Error {
  override readonly name = 'ExpressionError';
}

// ---------------------------------------------------------------------------------------------------
// Tokens

type Token =
  | { readonly kind: 'name'; readonly text: string } // #alias
  | { readonly kind: 'value'; readonly text: string } // :placeholder
  | { readonly kind: 'word'; readonly text: string } // identifier or keyword
  | { readonly kind: 'int'; readonly text: string }
  | { readonly kind: 'punct'; readonly text: string };

const TOKEN =
  /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(<>|<=|>=|[()[\],.=<>+-]))/y;

function tokenize(text: string, what: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  let at = 0;
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break;
    TOKEN.lastIndex = at;
    const m = TOKEN.exec(text);
    if (m === null)
      throw new ExpressionError(`${what}: invalid syntax at '${text.slice(at).trim().slice(0, 20)}'`);
    at = TOKEN.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'name', text: m[1] });
    else if (m[2] !== undefined) tokens.push({ kind: 'value', text: m[2] });
    else if (m[3] !== undefined) tokens.push({ kind: 'word', text: m[3] });
    else if (m[4] !== undefined) tokens.push({ kind: 'int', text: m[4] });
    else tokens.push({ kind: 'punct', text: m[5] ?? '' });
  }
  return tokens;
}

// ---------------------------------------------------------------------------------------------------
// Trees

/** A document path: its first element and `.name` / `[index]` steps; names as written (#alias or bare). */
export interface Path {
  readonly kind: 'path';
  readonly steps: readonly (string | number)[];
}
type Operand =
  | Path
  | { readonly kind: 'value'; readonly placeholder: string }
  | { readonly kind: 'size'; readonly path: Path };
type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';
export type Condition =
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition }
  | { readonly kind: 'not'; readonly operand: Condition }
  | { readonly kind: 'compare'; readonly op: Comparator; readonly left: Operand; readonly right: Operand }
  | { readonly kind: 'between'; readonly operand: Operand; readonly low: Operand; readonly high: Operand }
  | { readonly kind: 'in'; readonly operand: Operand; readonly list: readonly Operand[] }
  | { readonly kind: 'function'; readonly name: ConditionFunction; readonly args: readonly Operand[] };
type ConditionFunction =
  'attribute_exists' | 'attribute_not_exists' | 'attribute_type' | 'begins_with' | 'contains';

type SetValue =
  | Operand
  | { readonly kind: 'plus' | 'minus'; readonly left: SetValue; readonly right: SetValue }
  | { readonly kind: 'if_not_exists'; readonly path: Path; readonly fallback: SetValue }
  | { readonly kind: 'list_append'; readonly left: SetValue; readonly right: SetValue };

export interface Update {
  readonly set: readonly { readonly path: Path; readonly value: SetValue }[];
  readonly remove: readonly Path[];
  readonly add: readonly { readonly path: Path; readonly value: Operand }[];
  readonly delete: readonly { readonly path: Path; readonly value: Operand }[];
}

/** A parsed expression and the placeholders it uses (checked against the request's maps). */
export interface Parsed<T> {
  readonly tree: T;
  readonly names: ReadonlySet<string>;
  readonly values: ReadonlySet<string>;
}

// ---------------------------------------------------------------------------------------------------
// Parser (recursive descent; precedence: comparisons, NOT, AND, OR)

const CONDITION_FUNCTIONS = new Set<string>([
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'begins_with',
  'contains',
]);
const COMPARATORS = new Set<string>(['=', '<>', '<', '<=', '>', '>=']);

class Parser {
  private i = 0;
  readonly names = new Set<string>();
  readonly values = new Set<string>();
  private readonly tokens: Token[];

  constructor(
    text: string,
    private readonly what: string,
  ) {
    this.tokens = tokenize(text, what);
    if (this.tokens.length === 0) throw new ExpressionError(`${what}: the expression is empty`);
  }

  private peek(offset = 0): Token | undefined {
    return this.tokens[this.i + offset];
  }

  private isWord(word: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.kind === 'word' && t.text.toUpperCase() === word;
  }

  private isPunct(text: string): boolean {
    const t = this.peek();
    return t?.kind === 'punct' && t.text === text;
  }

  private fail(expected: string): never {
    const t = this.peek();
    throw new ExpressionError(
      `${this.what}: expected ${expected} ${t === undefined ? 'at the end' : `at '${t.text}'`}`,
    );
  }

  private expectPunct(text: string): void {
    if (!this.isPunct(text)) this.fail(`'${text}'`);
    this.i++;
  }

  end(): void {
    if (this.peek() !== undefined) this.fail('the end of the expression');
  }

  path(): Path {
    const steps: (string | number)[] = [this.element()];
    for (;;) {
      if (this.isPunct('.')) {
        this.i++;
        steps.push(this.element());
      } else if (this.isPunct('[')) {
        this.i++;
        const t = this.peek();
        if (t?.kind !== 'int') this.fail('a list index');
        this.i++;
        steps.push(Number(t.text));
        this.expectPunct(']');
      } else return { kind: 'path', steps };
    }
  }

  private element(): string {
    const t = this.peek();
    if (t?.kind === 'name') this.names.add(t.text);
    else if (t?.kind !== 'word') this.fail('an attribute name');
    this.i++;
    return t.text;
  }

  operand(): Operand {
    const t = this.peek();
    if (t?.kind === 'value') {
      this.i++;
      this.values.add(t.text);
      return { kind: 'value', placeholder: t.text };
    }
    if (t?.kind === 'word' && t.text === 'size' && this.peek(1)?.text === '(') {
      this.i += 2;
      const path = this.path();
      this.expectPunct(')');
      return { kind: 'size', path };
    }
    return this.path();
  }

  condition(): Condition {
    let left = this.conjunction();
    while (this.isWord('OR')) {
      this.i++;
      left = { kind: 'or', left, right: this.conjunction() };
    }
    return left;
  }

  private conjunction(): Condition {
    let left = this.negation();
    while (this.isWord('AND')) {
      this.i++;
      left = { kind: 'and', left, right: this.negation() };
    }
    return left;
  }

  private negation(): Condition {
    if (this.isWord('NOT')) {
      this.i++;
      return { kind: 'not', operand: this.negation() };
    }
    return this.comparison();
  }

  private comparison(): Condition {
    if (this.isPunct('(')) {
      this.i++;
      const inner = this.condition();
      this.expectPunct(')');
      return inner;
    }
    const t = this.peek();
    if (t?.kind === 'word' && CONDITION_FUNCTIONS.has(t.text) && this.peek(1)?.text === '(') {
      this.i += 2;
      const args = [this.operand()];
      while (this.isPunct(',')) {
        this.i++;
        args.push(this.operand());
      }
      this.expectPunct(')');
      const arity = t.text === 'attribute_exists' || t.text === 'attribute_not_exists' ? 1 : 2;
      if (args.length !== arity)
        throw new ExpressionError(`${this.what}: ${t.text} takes ${arity} argument${arity === 1 ? '' : 's'}`);
      if (args[0]?.kind !== 'path') throw new ExpressionError(`${this.what}: ${t.text} needs a path first`);
      return { kind: 'function', name: t.text as ConditionFunction, args };
    }
    const operand = this.operand();
    const next = this.peek();
    if (next?.kind === 'punct' && COMPARATORS.has(next.text)) {
      this.i++;
      return { kind: 'compare', op: next.text as Comparator, left: operand, right: this.operand() };
    }
    if (this.isWord('BETWEEN')) {
      this.i++;
      const low = this.operand();
      if (!this.isWord('AND')) this.fail('AND');
      this.i++;
      return { kind: 'between', operand, low, high: this.operand() };
    }
    if (this.isWord('IN')) {
      this.i++;
      this.expectPunct('(');
      const list = [this.operand()];
      while (this.isPunct(',')) {
        this.i++;
        list.push(this.operand());
      }
      this.expectPunct(')');
      return { kind: 'in', operand, list };
    }
    return this.fail('a comparator, BETWEEN or IN');
  }

  update(): Update {
    const set: { path: Path; value: SetValue }[] = [];
    const remove: Path[] = [];
    const add: { path: Path; value: Operand }[] = [];
    const del: { path: Path; value: Operand }[] = [];
    const seen = new Set<string>();
    while (this.peek() !== undefined) {
      const clause = this.peek()?.kind === 'word' ? (this.peek()?.text.toUpperCase() ?? '') : '';
      if (!['SET', 'REMOVE', 'ADD', 'DELETE'].includes(clause)) this.fail('SET, REMOVE, ADD or DELETE');
      if (seen.has(clause)) throw new ExpressionError(`${this.what}: the ${clause} section appears twice`);
      seen.add(clause);
      this.i++;
      do {
        if (clause === 'SET') {
          const path = this.path();
          this.expectPunct('=');
          set.push({ path, value: this.setValue() });
        } else if (clause === 'REMOVE') remove.push(this.path());
        else {
          const path = this.path();
          const value = this.operand();
          if (value.kind !== 'value')
            throw new ExpressionError(`${this.what}: ${clause} takes a value placeholder`);
          (clause === 'ADD' ? add : del).push({ path, value });
        }
      } while (this.isPunct(',') && ++this.i > 0);
    }
    return { set, remove, add, delete: del };
  }

  private setValue(): SetValue {
    const left = this.setOperand();
    if (this.isPunct('+') || this.isPunct('-')) {
      const kind = this.peek()?.text === '+' ? 'plus' : 'minus';
      this.i++;
      return { kind, left, right: this.setOperand() };
    }
    return left;
  }

  private setOperand(): SetValue {
    const t = this.peek();
    if (
      t?.kind === 'word' &&
      (t.text === 'if_not_exists' || t.text === 'list_append') &&
      this.peek(1)?.text === '('
    ) {
      this.i += 2;
      if (t.text === 'if_not_exists') {
        const path = this.path();
        this.expectPunct(',');
        const fallback = this.setValue();
        this.expectPunct(')');
        return { kind: 'if_not_exists', path, fallback };
      }
      const left = this.setValue();
      this.expectPunct(',');
      const right = this.setValue();
      this.expectPunct(')');
      return { kind: 'list_append', left, right };
    }
    const operand = this.operand();
    if (operand.kind === 'size')
      throw new ExpressionError(`${this.what}: size() is not allowed in an update`);
    return operand;
  }

  projection(): Path[] {
    const paths = [this.path()];
    while (this.isPunct(',')) {
      this.i++;
      paths.push(this.path());
    }
    return paths;
  }
}

const cache = new Map<string, Parsed<unknown>>();

function parsed<T>(kind: string, text: string, what: string, parse: (p: Parser) => T): Parsed<T> {
  const key = `${kind}\u0000${text}`;
  const known = cache.get(key);
  if (known !== undefined) return known as Parsed<T>;
  const parser = new Parser(text, what);
  const tree = parse(parser);
  parser.end();
  const result: Parsed<T> = { tree, names: parser.names, values: parser.values };
  // The texts a program sends are few; a bound keeps a caller that builds unique texts from growing it.
  if (cache.size >= 10_000) cache.clear();
  cache.set(key, result);
  return result;
}

export const parseCondition = (text: string, what: string): Parsed<Condition> =>
  parsed('condition', text, what, (p) => p.condition());
export const parseUpdate = (text: string, what: string): Parsed<Update> =>
  parsed('update', text, what, (p) => p.update());
export const parseProjection = (text: string, what: string): Parsed<Path[]> =>
  parsed('projection', text, what, (p) => p.projection());

// ---------------------------------------------------------------------------------------------------
// Placeholders

/** The request's ExpressionAttributeNames/Values, and which of them its expressions used. */
export class Placeholders {
  private readonly usedNames = new Set<string>();
  private readonly usedValues = new Set<string>();

  constructor(
    readonly names: Readonly<Record<string, string>> | undefined,
    readonly values: Readonly<Record<string, Value>> | undefined,
  ) {}

  use(expression: Parsed<unknown>): void {
    for (const n of expression.names) {
      if (this.names?.[n] === undefined)
        throw new ExpressionError(
          `An expression attribute name used in the document path is not defined; attribute name: ${n}`,
        );
      this.usedNames.add(n);
    }
    for (const v of expression.values) {
      if (this.values?.[v] === undefined)
        throw new ExpressionError(
          `An expression attribute value used in expression is not defined; attribute value: ${v}`,
        );
      this.usedValues.add(v);
    }
  }

  /** DynamoDB refuses names and values no expression used. */
  checkAllUsed(): void {
    const names = Object.keys(this.names ?? {}).filter((n) => !this.usedNames.has(n));
    if (names.length > 0)
      throw new ExpressionError(
        `Value provided in ExpressionAttributeNames unused in expressions: keys: {${names.join(', ')}}`,
      );
    const values = Object.keys(this.values ?? {}).filter((v) => !this.usedValues.has(v));
    if (values.length > 0)
      throw new ExpressionError(
        `Value provided in ExpressionAttributeValues unused in expressions: keys: {${values.join(', ')}}`,
      );
  }

  name(step: string): string {
    return step.startsWith('#') ? (this.names?.[step] as string) : step;
  }

  value(placeholder: string): Value {
    return this.values?.[placeholder] as Value;
  }
}

// ---------------------------------------------------------------------------------------------------
// Evaluation

export function pathValue(item: Item | undefined, path: Path, p: Placeholders): Value | undefined {
  let current: Value | undefined;
  for (const [i, step] of path.steps.entries()) {
    if (i === 0) current = item?.[p.name(step as string)];
    else if (typeof step === 'number') current = current?.L?.[step];
    else current = current?.M?.[p.name(step)];
    if (current === undefined) return undefined;
  }
  return current;
}

/** The top-level attribute a path starts at (key attributes cannot be updated). */
export function topAttribute(path: Path, p: Placeholders): string {
  return p.name(path.steps[0] as string);
}

function operandValue(item: Item | undefined, operand: Operand, p: Placeholders): Value | undefined {
  switch (operand.kind) {
    case 'value':
      return p.value(operand.placeholder);
    case 'path':
      return pathValue(item, operand, p);
    case 'size': {
      const v = pathValue(item, operand.path, p);
      if (v === undefined) return undefined;
      const n =
        v.S !== undefined
          ? v.S.length // as dynalite: UTF-16 code units
          : v.B !== undefined
            ? v.B.byteLength
            : ((v.L ?? v.SS ?? v.NS ?? v.BS)?.length ??
              (v.M === undefined ? undefined : Object.keys(v.M).length));
      return n === undefined ? undefined : { N: String(n) };
    }
  }
}

function compare(op: Comparator, a: Value | undefined, b: Value | undefined): boolean {
  if (a === undefined || b === undefined) return op === '<>' && (a === undefined) !== (b === undefined);
  if (op === '=') return valuesEqual(a, b);
  if (op === '<>') return !valuesEqual(a, b);
  const order = compareValues(a, b);
  if (order === undefined) return false;
  return op === '<' ? order < 0 : op === '<=' ? order <= 0 : op === '>' ? order > 0 : order >= 0;
}

function contains(container: Value, element: Value): boolean {
  if (container.S !== undefined) return element.S !== undefined && container.S.includes(element.S);
  if (container.SS !== undefined) return element.S !== undefined && container.SS.includes(element.S);
  if (container.NS !== undefined)
    return element.N !== undefined && container.NS.some((n) => compareValues({ N: n }, element) === 0);
  if (container.BS !== undefined)
    return element.B !== undefined && container.BS.some((b) => compareValues({ B: b }, element) === 0);
  if (container.L !== undefined) return container.L.some((v) => valuesEqual(v, element));
  if (container.B !== undefined && element.B !== undefined)
    return Buffer.from(container.B).includes(Buffer.from(element.B));
  return false;
}

export function evaluate(item: Item | undefined, c: Condition, p: Placeholders): boolean {
  switch (c.kind) {
    case 'and':
      return evaluate(item, c.left, p) && evaluate(item, c.right, p);
    case 'or':
      return evaluate(item, c.left, p) || evaluate(item, c.right, p);
    case 'not':
      return !evaluate(item, c.operand, p);
    case 'compare':
      return compare(c.op, operandValue(item, c.left, p), operandValue(item, c.right, p));
    case 'between': {
      const v = operandValue(item, c.operand, p);
      const low = operandValue(item, c.low, p);
      const high = operandValue(item, c.high, p);
      if (v === undefined || low === undefined || high === undefined) return false;
      const lo = compareValues(v, low);
      const hi = compareValues(v, high);
      return lo !== undefined && hi !== undefined && lo >= 0 && hi <= 0;
    }
    case 'in': {
      const v = operandValue(item, c.operand, p);
      return (
        v !== undefined &&
        c.list.some((o) => {
          const w = operandValue(item, o, p);
          return w !== undefined && valuesEqual(v, w);
        })
      );
    }
    case 'function': {
      const [first, second] = c.args.map((a) => operandValue(item, a, p));
      switch (c.name) {
        case 'attribute_exists':
          return first !== undefined;
        case 'attribute_not_exists':
          return first === undefined;
        case 'attribute_type':
          return first !== undefined && second?.S !== undefined && typeOf(first) === second.S;
        case 'begins_with':
          if (first === undefined || second === undefined) return false;
          if (first.S !== undefined) return second.S !== undefined && first.S.startsWith(second.S);
          if (first.B !== undefined && second.B !== undefined)
            return Buffer.from(first.B).subarray(0, second.B.byteLength).equals(Buffer.from(second.B));
          return false;
        case 'contains':
          return first !== undefined && second !== undefined && contains(first, second);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Updates (copy on write: stored values are never changed in place)

function setValueOf(item: Item | undefined, v: SetValue, p: Placeholders, where: string): Value {
  switch (v.kind) {
    case 'value':
    case 'path':
    case 'size': {
      const value = operandValue(item, v, p);
      if (value === undefined)
        throw new ExpressionError(
          `${where}: The provided expression refers to an attribute that does not exist in the item`,
        );
      return value;
    }
    case 'if_not_exists':
      return pathValue(item, v.path, p) ?? setValueOf(item, v.fallback, p, where);
    case 'plus':
    case 'minus': {
      const a = setValueOf(item, v.left, p, where);
      const b = setValueOf(item, v.right, p, where);
      if (a.N === undefined || b.N === undefined)
        throw new ExpressionError(`${where}: An operand in the update expression has an incorrect data type`);
      return { N: addNumbers(a.N, b.N, v.kind === 'minus') };
    }
    case 'list_append': {
      const a = setValueOf(item, v.left, p, where);
      const b = setValueOf(item, v.right, p, where);
      if (a.L === undefined || b.L === undefined)
        throw new ExpressionError(`${where}: An operand in the update expression has an incorrect data type`);
      return { L: [...a.L, ...b.L] };
    }
  }
}

/** `value` at `path` in a copy of `container` (undefined `value` removes); copies only along the path. */
function withPath(
  container: Value,
  steps: readonly (string | number)[],
  value: Value | undefined,
  p: Placeholders,
  where: string,
): Value {
  const [step, ...rest] = steps;
  const invalid = (): never => {
    throw new ExpressionError(
      `${where}: The document path provided in the update expression is invalid for update`,
    );
  };
  if (typeof step === 'number') {
    if (container.L === undefined) return invalid();
    const list = [...container.L];
    if (rest.length > 0) {
      const inner = list[step];
      if (inner === undefined) return invalid();
      list[step] = withPath(inner, rest, value, p, where);
    } else if (value === undefined) {
      if (step < list.length) list.splice(step, 1);
    } else if (step < list.length) list[step] = value;
    else list.push(value); // DynamoDB appends past the end
    return { L: list };
  }
  if (container.M === undefined) return invalid();
  const name = p.name(step as string);
  if (rest.length === 0 && value === undefined)
    return { M: Object.fromEntries(Object.entries(container.M).filter(([k]) => k !== name)) };
  const map = { ...container.M };
  if (rest.length > 0) {
    const inner = map[name];
    if (inner === undefined) return invalid();
    map[name] = withPath(inner, rest, value, p, where);
  } else if (value !== undefined) map[name] = value;
  return { M: map };
}

function assign(item: Item, path: Path, value: Value | undefined, p: Placeholders, where: string): Item {
  const updated = withPath({ M: item }, path.steps, value, p, where);
  return updated.M ?? {};
}

/**
 * The item after `update`, computed from `before` (values read from `before`, as DynamoDB does:
 * every action sees the item as it was). Throws ExpressionError for what DynamoDB refuses.
 */
export function applyUpdate(before: Item, update: Update, p: Placeholders, where: string): Item {
  const paths = [
    ...update.set.map((a) => a.path),
    ...update.remove,
    ...update.add.map((a) => a.path),
    ...update.delete.map((a) => a.path),
  ].map((path) => path.steps.map((s) => (typeof s === 'number' ? `[${s}]` : p.name(s))).join('.'));
  for (const [i, a] of paths.entries()) {
    for (const b of paths.slice(i + 1)) {
      if (
        a === b ||
        a.startsWith(`${b}.`) ||
        b.startsWith(`${a}.`) ||
        a.startsWith(`${b}[`) ||
        b.startsWith(`${a}[`)
      )
        throw new ExpressionError(`${where}: Two document paths overlap with each other: [${a}, ${b}]`);
    }
  }
  let item = before;
  try {
    for (const action of update.set)
      item = assign(
        item,
        action.path,
        checkedCopy(setValueOf(before, action.value, p, where), where),
        p,
        where,
      );
    // REMOVEs of list elements apply from the highest index down, so indexes refer to the old list.
    const removes = [...update.remove].sort((x, y) => {
      const a = x.steps[x.steps.length - 1];
      const b = y.steps[y.steps.length - 1];
      return typeof a === 'number' && typeof b === 'number' ? b - a : 0;
    });
    for (const path of removes) {
      if (pathValue(before, path, p) !== undefined) item = assign(item, path, undefined, p, where);
    }
    for (const action of update.add)
      item = assign(item, action.path, added(before, action, p, where), p, where);
    for (const action of update.delete)
      item = assign(item, action.path, deleted(before, action, p, where), p, where);
  } catch (error) {
    if (error instanceof ValueError) throw new ExpressionError(`${where}: ${error.message}`);
    throw error;
  }
  return item;
}

function added(item: Item, action: Update['add'][number], p: Placeholders, where: string): Value {
  const current = pathValue(item, action.path, p);
  const value = operandValue(item, action.value, p) as Value;
  const wrongType = (): never => {
    throw new ExpressionError(`${where}: An operand in the update expression has an incorrect data type`);
  };
  if (value.N !== undefined) {
    if (current === undefined) return { N: value.N };
    return current.N === undefined ? wrongType() : { N: addNumbers(current.N, value.N) };
  }
  const adding = setMembers(value) ?? wrongType();
  if (current === undefined) return checkedCopy(value, where);
  const present = setMembers(current);
  if (present?.type !== adding.type) return wrongType();
  const union = [...present.members];
  for (const v of adding.members) if (!union.some((u) => valuesEqual(u, v))) union.push(v);
  return setOf(adding.type, union) ?? wrongType();
}

function deleted(
  item: Item,
  action: Update['delete'][number],
  p: Placeholders,
  where: string,
): Value | undefined {
  const current = pathValue(item, action.path, p);
  const value = operandValue(item, action.value, p) as Value;
  if (current === undefined) return undefined;
  const removing = setMembers(value);
  const present = setMembers(current);
  if (removing === undefined || present?.type !== removing.type)
    throw new ExpressionError(`${where}: An operand in the update expression has an incorrect data type`);
  return setOf(
    present.type,
    present.members.filter((u) => !removing.members.some((v) => valuesEqual(u, v))),
  );
}

/** The attributes `paths` select from `item` (nested paths keep their enclosing maps and lists). */
export function project(item: Item, paths: readonly Path[], p: Placeholders): Item {
  let out: Item = {};
  for (const path of paths) {
    const value = pathValue(item, path, p);
    if (value === undefined) continue;
    if (path.steps.length === 1) out[topAttribute(path, p)] = value;
    else out = projectNested(out, item, path, p);
  }
  return out;
}

function projectNested(out: Item, item: Item, path: Path, p: Placeholders): Item {
  // Rebuild the containers along the path, keeping what earlier paths already selected.
  const build = (into: Value | undefined, from: Value, steps: readonly (string | number)[]): Value => {
    const [step, ...rest] = steps;
    if (step === undefined) return from;
    if (typeof step === 'number') {
      const list = [...(into?.L ?? [])];
      const inner = from.L?.[step] as Value;
      list.push(build(undefined, inner, rest));
      return { L: list };
    }
    const name = p.name(step);
    const map = { ...(into?.M ?? {}) };
    map[name] = build(map[name], from.M?.[name] as Value, rest);
    return { M: map };
  };
  return build({ M: out }, { M: item }, path.steps).M ?? {};
}
