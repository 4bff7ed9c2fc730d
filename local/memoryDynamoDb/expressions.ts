// DynamoDB's expression language, evaluated against items in wire form: conditions, updates (copy on
// write) and projections, with the request's ExpressionAttributeNames/Values (Placeholders). The
// trees come from expressionParser.ts.
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
import {
  ExpressionError,
  type Comparator,
  type Condition,
  type Operand,
  type Parsed,
  type Path,
  type SetValue,
  type Update,
} from './expressionParser.js';

export {
  ExpressionError,
  parseCondition,
  parseProjection,
  parseUpdate,
  type Condition,
  type Path,
} from './expressionParser.js';

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
  checkNoOverlap(
    [
      ...update.set.map((a) => a.path),
      ...update.remove,
      ...update.add.map((a) => a.path),
      ...update.delete.map((a) => a.path),
    ],
    p,
    where,
  );
  // Top-level attributes (most actions) change one copy of the item in place; a nested path copies
  // along its path (withPath). Either way `before` is never changed: every action reads from it.
  let item = before;
  let own = false;
  const put = (path: Path, value: Value | undefined): void => {
    const [top] = path.steps;
    if (path.steps.length !== 1 || typeof top !== 'string') {
      item = assign(item, path, value, p, where);
      own = true;
      return;
    }
    if (!own) {
      item = { ...item };
      own = true;
    }
    const name = p.name(top);
    if (value === undefined) Reflect.deleteProperty(item, name);
    else item[name] = value;
  };
  try {
    for (const action of update.set)
      put(action.path, checkedCopy(setValueOf(before, action.value, p, where), where));
    // REMOVEs of list elements apply from the highest index down, so indexes refer to the old list.
    const removes = [...update.remove].sort((x, y) => {
      const a = x.steps[x.steps.length - 1];
      const b = y.steps[y.steps.length - 1];
      return typeof a === 'number' && typeof b === 'number' ? b - a : 0;
    });
    for (const path of removes) {
      if (pathValue(before, path, p) !== undefined) put(path, undefined);
    }
    for (const action of update.add) put(action.path, added(before, action, p, where));
    for (const action of update.delete) put(action.path, deleted(before, action, p, where));
  } catch (error) {
    if (error instanceof ValueError) throw new ExpressionError(`${where}: ${error.message}`);
    throw error;
  }
  return item;
}

/** DynamoDB refuses an update two of whose paths are the same or one inside the other. */
function checkNoOverlap(paths: readonly Path[], p: Placeholders, where: string): void {
  const texts = paths.map((path) =>
    path.steps.map((s) => (typeof s === 'number' ? `[${s}]` : p.name(s))).join('.'),
  );
  // Top-level names without a dot or a bracket (most updates) overlap only when equal: a set tells.
  // Any repeat goes to the full comparison, which names the pair it finds first.
  if (paths.every((path) => path.steps.length === 1) && texts.every((t) => !/[.[]/.test(t))) {
    if (new Set(texts).size === texts.length) return;
  }
  for (const [i, a] of texts.entries()) {
    for (const b of texts.slice(i + 1)) {
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
