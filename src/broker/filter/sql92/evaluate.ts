// Expression nodes of the SQL92 selector, with Java's runtime semantics (filter/expression/*.java:
// ComparisonExpression, LogicExpression, UnaryExpression, UnaryInExpression, ConstantExpression,
// PropertyExpression). A node evaluates to TRUE, FALSE, null ("unknown") or, for non-boolean nodes, a value.
import {
  JDouble, JInt, JLong, type PropertySource, Sql92EvalError, type Value, describeValue, javaCompare, parseJavaDouble,
} from './values.js';

export { JDouble, JInt, JLong, type PropertySource, Sql92EvalError, type Value, describeValue, javaCompare } from './values.js';

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
  constructor(readonly name: string) {
    super();
  }
  evaluate(props: PropertySource): Value {
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

/** `=` and IS NULL (ComparisonExpression.doCreateEqual): NULL = NULL is TRUE; x = NULL is FALSE; NULL = x is null. */
export class EqualExpr extends BinaryBool {
  evaluate(props: PropertySource): boolean | null {
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
  constructor(
    readonly op: Relation,
    left: Expr,
    right: Expr,
  ) {
    super(left, right);
  }
  evaluate(props: PropertySource): boolean | null {
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
    const c = javaCompare(l, r);
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
  constructor(
    operand: PropertyExpr,
    readonly values: readonly string[],
    readonly not: boolean,
  ) {
    super(operand);
    this.set = new Set(values);
  }
  evaluate(props: PropertySource): boolean | null {
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
