// Expression nodes of the SQL92 selector, with Java's runtime semantics (filter/expression/*.java:
// ComparisonExpression, LogicExpression, UnaryExpression, UnaryInExpression, ConstantExpression,
// PropertyExpression). A node evaluates to TRUE, FALSE, null ("unknown") or, for non-boolean nodes, a value.
import {
  JDouble, JInt, JLong, type PropertySource, Sql92EvalError, type Value, asciiBytes, asciiIntegerBytes, bytesEqual,
  describeValue, javaCompare, parseJavaDouble, propertyKeyBytes,
} from './values.js';

export {
  JDouble, JInt, JLong, type PropertyBytes, type PropertySource, Sql92EvalError, type Value, describeValue, javaCompare,
} from './values.js';

export abstract class Expr {
  /** Java BooleanExpression: evaluates to TRUE, FALSE or null; usable with AND/OR/NOT. */
  abstract readonly isBoolean: boolean;
  /** Nesting depth, bounded by the parser so evaluation cannot exhaust the stack. */
  abstract readonly depth: number;
  abstract evaluate(props: PropertySource): Value;
  abstract toString(): string;
}

export abstract class BoolExpr extends Expr {
  readonly isBoolean = true;
  abstract override evaluate(props: PropertySource): boolean | null;
}

/** ConstantExpression; TRUE/FALSE/NULL are BooleanConstantExpressions (isBoolean). */
export class ConstantExpr extends Expr {
  readonly depth = 1;
  constructor(
    readonly value: Value,
    readonly isBoolean: boolean,
  ) {
    super();
  }
  evaluate(): Value {
    return this.value;
  }
  toString(): string {
    return describeValue(this.value);
  }
}

export class PropertyExpr extends Expr {
  readonly isBoolean = false;
  readonly depth = 1;
  /** The name's bytes for PropertyBytes.find, or null when it cannot be looked up that way. */
  readonly key: Uint8Array | null;
  constructor(readonly name: string) {
    super();
    this.key = propertyKeyBytes(name);
  }
  evaluate(props: PropertySource): Value {
    const b = props.bytes;
    if (b !== undefined && this.key !== null) {
      const at = b.find(this.key);
      return at < 0 ? null : b.decode(at, b.valueEnd);
    }
    return props.get(this.name) ?? null;
  }
  toString(): string {
    return this.name;
  }
}

/** UnaryExpression.createNegate: numbers are negated (with Java overflow), anything else is null. */
export class NegateExpr extends Expr {
  readonly isBoolean = false;
  readonly depth: number;
  constructor(readonly operand: Expr) {
    super();
    this.depth = operand.depth + 1;
  }
  evaluate(props: PropertySource): Value {
    const v = this.operand.evaluate(props);
    if (v instanceof JInt) return new JInt(-v.v | 0);
    if (v instanceof JLong) return new JLong(BigInt.asIntN(64, -v.v));
    if (v instanceof JDouble) return new JDouble(-v.v);
    return null;
  }
  toString(): string {
    return `(- ${this.operand})`;
  }
}

abstract class UnaryBool extends BoolExpr {
  readonly depth: number;
  constructor(readonly operand: Expr) {
    super();
    this.depth = operand.depth + 1;
  }
}

abstract class BinaryBool extends BoolExpr {
  readonly depth: number;
  constructor(
    readonly left: Expr,
    readonly right: Expr,
  ) {
    super();
    this.depth = Math.max(left.depth, right.depth) + 1;
  }
}

export class NotExpr extends UnaryBool {
  evaluate(props: PropertySource): boolean | null {
    const v = this.operand.evaluate(props) as boolean | null;
    return v === null ? null : !v;
  }
  toString(): string {
    return `(NOT ${this.operand})`;
  }
}

/** A bare property used as a condition: null when absent, else TRUE only for a Boolean (never, for strings). */
export class BooleanCastExpr extends UnaryBool {
  evaluate(props: PropertySource): boolean | null {
    const v = this.operand.evaluate(props);
    if (v === null) return null;
    return v === true;
  }
  toString(): string {
    return this.operand.toString();
  }
}

export class AndExpr extends BinaryBool {
  evaluate(props: PropertySource): boolean | null {
    const l = this.left.evaluate(props) as boolean | null;
    if (l === false) return false;
    const r = this.right.evaluate(props) as boolean | null;
    if (r === false) return false;
    return l === null || r === null ? null : true;
  }
  toString(): string {
    return `(${this.left} && ${this.right})`;
  }
}

export class OrExpr extends BinaryBool {
  evaluate(props: PropertySource): boolean | null {
    const l = this.left.evaluate(props) as boolean | null;
    if (l === true) return true;
    const r = this.right.evaluate(props) as boolean | null;
    if (r === true) return true;
    return l === null || r === null ? null : false;
  }
  toString(): string {
    return `(${this.left} || ${this.right})`;
  }
}

/**
 * A comparison of a property with a constant that can be made on the property's bytes: an ASCII string (equal
 * exactly when the value's bytes are the string's; any other byte decodes to a non-ASCII char) or an Integer (the
 * value's ASCII digits read as javaIntegerValueOf reads them; other text is decoded and takes the general path).
 */
class PropertyVsConstant {
  private constructor(
    readonly prop: PropertyExpr,
    readonly key: Uint8Array,
    readonly constant: string | JInt,
    /** The constant is on the left. */
    readonly flipped: boolean,
    readonly stringBytes: Uint8Array | null,
  ) {}

  static of(left: Expr, right: Expr, strings: boolean): PropertyVsConstant | null {
    let prop: Expr;
    let c: Expr;
    let flipped = false;
    if (left instanceof PropertyExpr && right instanceof ConstantExpr) {
      prop = left;
      c = right;
    } else if (right instanceof PropertyExpr && left instanceof ConstantExpr) {
      prop = right;
      c = left;
      flipped = true;
    } else {
      return null;
    }
    const p = prop as PropertyExpr;
    const v = (c as ConstantExpr).value;
    if (p.key === null) return null;
    if (v instanceof JInt) return new PropertyVsConstant(p, p.key, v, flipped, null);
    if (strings && typeof v === 'string') {
      const bytes = asciiBytes(v);
      return bytes === null ? null : new PropertyVsConstant(p, p.key, v, flipped, bytes);
    }
    return null;
  }

  /** javaCompare(left, right) for an Integer constant and the value at [at, end); throws as it does. */
  compareInt(b: { buf: Uint8Array; decode(start: number, end: number): string }, at: number, end: number): number {
    const k = this.constant as JInt;
    const v = asciiIntegerBytes(b.buf, at, end, 9);
    if (v === v) {
      const c = Math.sign((v | 0) - k.v);
      return this.flipped ? -c : c;
    }
    const s = b.decode(at, end);
    return this.flipped ? javaCompare(k, s) : javaCompare(s, k);
  }
}

/** `=` and IS NULL (ComparisonExpression.doCreateEqual): NULL = NULL is TRUE; x = NULL is FALSE; NULL = x is null. */
export class EqualExpr extends BinaryBool {
  private readonly fast: PropertyVsConstant | null;
  constructor(left: Expr, right: Expr) {
    super(left, right);
    this.fast = PropertyVsConstant.of(left, right, true);
  }
  evaluate(props: PropertySource): boolean | null {
    const b = props.bytes;
    const fast = this.fast;
    if (b !== undefined && fast !== null) {
      const at = b.find(fast.key);
      // An absent property is null: NULL = x is null, x = NULL is FALSE.
      if (at < 0) return fast.flipped ? false : null;
      const end = b.valueEnd;
      if (fast.stringBytes !== null) return bytesEqual(b.buf, at, end, fast.stringBytes);
      return fast.compareInt(b, at, end) === 0;
    }
    const l = this.left.evaluate(props);
    const r = this.right.evaluate(props);
    if (l === null || r === null) {
      if (l === null && r === null) return true;
      return l === null ? null : false;
    }
    if (typeof l === 'string' && typeof r === 'string') return l === r;
    return javaCompare(l, r) === 0;
  }
  toString(): string {
    return `(${this.left} == ${this.right})`;
  }
}

export type Relation = '>' | '>=' | '<' | '<=';

/** `> >= < <=`: null if either side is null; two strings are both parsed as doubles (or it throws). */
export class RelationExpr extends BinaryBool {
  private readonly fast: PropertyVsConstant | null;
  constructor(
    readonly op: Relation,
    left: Expr,
    right: Expr,
  ) {
    super(left, right);
    this.fast = PropertyVsConstant.of(left, right, false);
  }
  evaluate(props: PropertySource): boolean | null {
    const bytes = props.bytes;
    const fast = this.fast;
    let c: number;
    if (bytes !== undefined && fast !== null) {
      const at = bytes.find(fast.key);
      if (at < 0) return null;
      c = fast.compareInt(bytes, at, bytes.valueEnd);
    } else {
      let l = this.left.evaluate(props);
      if (l === null) return null;
      let r = this.right.evaluate(props);
      if (r === null) return null;
      if (typeof l === 'string' && typeof r === 'string') {
        const a = parseJavaDouble(l);
        const b = parseJavaDouble(r);
        if (a === null || b === null) {
          throw new Sql92EvalError(`It's illegal to compare string by '>=', '>', '<', '<='. lv=${l}, rv=${r}`);
        }
        l = new JDouble(a);
        r = new JDouble(b);
      }
      c = javaCompare(l, r);
    }
    switch (this.op) {
      case '>':
        return c > 0;
      case '>=':
        return c >= 0;
      case '<':
        return c < 0;
      default:
        return c <= 0;
    }
  }
  toString(): string {
    return `(${this.left} ${this.op} ${this.right})`;
  }
}

/** [NOT] IN ('a', ...): on a property only; null when the property is absent. */
export class InExpr extends UnaryBool {
  private readonly set: ReadonlySet<string>;
  /** The property's key and the values' bytes when every value is ASCII (compared as bytes, see PropertyVsConstant). */
  private readonly key: Uint8Array | null;
  private readonly valueBytes: readonly Uint8Array[] | null;
  constructor(
    operand: PropertyExpr,
    readonly values: readonly string[],
    readonly not: boolean,
  ) {
    super(operand);
    this.set = new Set(values);
    const bytes = values.map(asciiBytes);
    this.valueBytes = bytes.every((x) => x !== null) ? (bytes as Uint8Array[]) : null;
    this.key = this.valueBytes === null ? null : operand.key;
  }
  evaluate(props: PropertySource): boolean | null {
    const b = props.bytes;
    if (b !== undefined && this.key !== null) {
      const at = b.find(this.key);
      if (at < 0) return null;
      const end = b.valueEnd;
      let hit = false;
      for (const want of this.valueBytes!) {
        if (bytesEqual(b.buf, at, end, want)) {
          hit = true;
          break;
        }
      }
      return hit !== this.not;
    }
    const v = this.operand.evaluate(props);
    if (typeof v !== 'string') return null;
    return this.set.has(v) !== this.not;
  }
  toString(): string {
    return `${this.operand} ${this.not ? 'NOT IN' : 'IN'} ( ${this.values.map((v) => describeValue(v)).join(', ')} )`;
  }
}

export type StringMatch = 'CONTAINS' | 'STARTSWITH' | 'ENDSWITH';

/** 5.x [NOT] CONTAINS/STARTSWITH/ENDSWITH: FALSE (not null) for an absent or non-string value or empty search. */
export class StringMatchExpr extends UnaryBool {
  constructor(
    readonly op: StringMatch,
    operand: Expr,
    readonly search: string,
    readonly not: boolean,
  ) {
    super(operand);
  }
  evaluate(props: PropertySource): boolean {
    if (this.search.length === 0) return false;
    const v = this.operand.evaluate(props);
    if (typeof v !== 'string') return false;
    const hit =
      this.op === 'CONTAINS' ? v.includes(this.search) : this.op === 'STARTSWITH' ? v.startsWith(this.search) : v.endsWith(this.search);
    return hit !== this.not;
  }
  toString(): string {
    return `(${this.not ? 'NOT ' : ''}${this.op} ${this.operand})`;
  }
}
