// Recursive-descent parser for RocketMQ's SQL92 message selector, following the grammar of
// filter/parser/SelectorParser.jj and the build-time checks of ComparisonExpression/ConstantExpression.
//
//   selector   := or                                  (then stops: like JavaCC's JmsSelector, no EOF is required)
//   or         := and ( OR and )*
//   and        := equality ( AND equality )*
//   equality   := comparison ( '=' comparison | '<>' comparison | IS NULL | IS NOT NULL )*
//   comparison := unary ( ('>'|'>='|'<'|'<=') unary | [NOT] (CONTAINS|STARTSWITH|ENDSWITH) string
//                       | [NOT] BETWEEN unary AND unary | [NOT] IN '(' string (',' string)* ')' )*
//   unary      := '+' unary | '-' unary | NOT unary | primary
//   primary    := literal | identifier | '(' or ')'
//
// Java quirks kept: NOT binds tighter than comparisons (`NOT a = 1` is `(NOT a) = 1`); tokens after a complete
// expression are ignored unless they start an operator (`a = 1 b` is `a = 1`, `a = 1 NOT b` is an error); `>`-style operands must not be string/boolean/NULL literals or conditions; a float
// literal must be >= Double.MIN_VALUE (so `0.0` is rejected); BETWEEN's literal bounds must be ordered.
import {
  AndExpr, BooleanCastExpr, ConstantExpr, EqualExpr, type Expr, InExpr, JDouble, JInt, JLong, NegateExpr, NotExpr,
  OrExpr, PropertyExpr, type Relation, RelationExpr, Sql92EvalError, type StringMatch, StringMatchExpr, javaCompare,
} from './evaluate.js';
import { Lexer, type Token, type TokenKind } from './lexer.js';

/** Deeper trees are refused so evaluation can never overflow the stack (Java has no limit and fails later). */
export const MAX_EXPRESSION_DEPTH = 512;

const TRUE = new ConstantExpr(true, true);
const FALSE = new ConstantExpr(false, true);
const NULL = new ConstantExpr(null, true);

const LONG_MAX = 2n ** 63n - 1n;
const INT_MAX = 2n ** 31n - 1n;
const DOUBLE_MIN_VALUE = 4.9e-324;

/** Parses a selector into its boolean root; throws SqlParseError. */
export function parseSelector(source: string): Expr {
  return new Parser(source).parse();
}

class Parser {
  private readonly lx: Lexer;
  /** Open parentheses and prefix operators around the current position (bounds the parser's own recursion). */
  private nesting = 0;

  constructor(source: string) {
    this.lx = new Lexer(source);
  }

  parse(): Expr {
    const first = this.lx.peek();
    return this.asBoolean(this.or(), first);
  }

  // -------------------------------------------------------------------------------------------- helpers

  private at(kind: TokenKind, k = 0): boolean {
    return this.lx.peek(k).kind === kind;
  }

  private expect(kind: TokenKind, what: string): Token {
    const t = this.lx.peek();
    if (t.kind !== kind) throw this.unexpected(t, what);
    return this.lx.next();
  }

  private unexpected(t: Token, expected: string): Error {
    const found = t.kind === 'EOF' ? 'end of expression' : `"${t.image}"`;
    return this.lx.errorAt(t.position, `Encountered ${found}, was expecting ${expected}`);
  }

  private fail(t: Token, reason: string): Error {
    return this.lx.errorAt(t.position, reason);
  }

  private checked<E extends Expr>(e: E, at: Token): E {
    if (e.depth > MAX_EXPRESSION_DEPTH) throw this.fail(at, `expression nested deeper than ${MAX_EXPRESSION_DEPTH}`);
    return e;
  }

  /** SelectorParser.asBooleanExpression: conditions pass, a bare property becomes a boolean cast. */
  private asBoolean(e: Expr, at: Token): Expr {
    if (e.isBoolean) return e;
    if (e instanceof PropertyExpr) return new BooleanCastExpr(e);
    throw this.fail(at, `Expression will not result in a boolean value: ${e}`);
  }

  /** ComparisonExpression.checkLessThanOperand: only numeric literals or non-boolean expressions. */
  private checkRelationOperand(e: Expr, at: Token): void {
    if (e instanceof ConstantExpr) {
      const v = e.value;
      if (v instanceof JInt || v instanceof JLong || v instanceof JDouble) return;
      throw this.fail(at, `Value '${e}' cannot be compared.`);
    }
    if (e.isBoolean) throw this.fail(at, `Value '${e}' cannot be compared.`);
  }

  private relation(op: Relation, l: Expr, r: Expr, at: Token): Expr {
    this.checkRelationOperand(l, at);
    this.checkRelationOperand(r, at);
    return this.checked(new RelationExpr(op, l, r), at);
  }

  /** ComparisonExpression.createEqual: no NULL literal; a boolean literal on the left needs one on the right. */
  private equal(l: Expr, r: Expr, at: Token): Expr {
    for (const e of [l, r]) {
      if (e instanceof ConstantExpr && e.value === null) throw this.fail(at, `'${e}' cannot be compared.`);
    }
    if (l instanceof ConstantExpr && r instanceof ConstantExpr && l.isBoolean && !r.isBoolean) {
      throw this.fail(at, `'${l}' cannot be compared with '${r}'`);
    }
    return this.checked(new EqualExpr(l, r), at);
  }

  // -------------------------------------------------------------------------------------------- grammar

  private or(): Expr {
    const first = this.lx.peek();
    let left = this.and();
    while (this.at('OR')) {
      const op = this.lx.next();
      const rightStart = this.lx.peek();
      const right = this.and();
      left = this.checked(new OrExpr(this.asBoolean(left, first), this.asBoolean(right, rightStart)), op);
    }
    return left;
  }

  private and(): Expr {
    const first = this.lx.peek();
    let left = this.equality();
    while (this.at('AND')) {
      const op = this.lx.next();
      const rightStart = this.lx.peek();
      const right = this.equality();
      left = this.checked(new AndExpr(this.asBoolean(left, first), this.asBoolean(right, rightStart)), op);
    }
    return left;
  }

  private equality(): Expr {
    let left = this.comparison();
    for (;;) {
      const op = this.lx.peek();
      if (op.kind === '=') {
        this.lx.next();
        left = this.equal(left, this.comparison(), op);
      } else if (op.kind === '<>') {
        this.lx.next();
        left = this.checked(new NotExpr(this.equal(left, this.comparison(), op)), op);
      } else if (op.kind === 'IS') {
        this.lx.next();
        if (this.at('NULL')) {
          this.lx.next();
          left = this.checked(new EqualExpr(left, NULL), op);
        } else {
          this.expect('NOT', 'NULL or NOT NULL after IS');
          this.expect('NULL', 'NULL after IS NOT');
          left = this.checked(new NotExpr(new EqualExpr(left, NULL)), op);
        }
      } else {
        return left;
      }
    }
  }

  private comparison(): Expr {
    let left = this.unary();
    for (;;) {
      const op = this.lx.peek();
      switch (op.kind) {
        case '>':
        case '>=':
        case '<':
        case '<=':
          this.lx.next();
          left = this.relation(op.kind, left, this.unary(), op);
          continue;
        case 'CONTAINS':
        case 'STARTSWITH':
        case 'ENDSWITH':
          this.lx.next();
          left = this.checked(new StringMatchExpr(op.kind, left, this.stringLiteral(), false), op);
          continue;
        case 'BETWEEN':
          this.lx.next();
          left = this.between(left, op, false);
          continue;
        case 'IN':
          this.lx.next();
          left = this.inList(left, op, false);
          continue;
        case 'NOT': {
          // JavaCC enters the loop on NOT, then needs one of these after it (LOOKAHEAD(2)), else it fails.
          const k = this.lx.peek(1).kind;
          if (k === 'CONTAINS' || k === 'STARTSWITH' || k === 'ENDSWITH') {
            this.lx.next();
            this.lx.next();
            left = this.checked(new StringMatchExpr(k as StringMatch, left, this.stringLiteral(), true), op);
            continue;
          }
          if (k === 'BETWEEN') {
            this.lx.next();
            this.lx.next();
            left = this.between(left, op, true);
            continue;
          }
          if (k === 'IN') {
            this.lx.next();
            this.lx.next();
            left = this.inList(left, op, true);
            continue;
          }
          throw this.unexpected(this.lx.peek(1), 'CONTAINS, STARTSWITH, ENDSWITH, BETWEEN or IN after NOT');
        }
        default:
          return left;
      }
    }
  }

  private between(value: Expr, op: Token, not: boolean): Expr {
    const low = this.unary();
    this.expect('AND', 'AND in BETWEEN');
    const high = this.unary();
    if (not) {
      // createNotBetween: value < low OR value > high.
      return this.checked(new OrExpr(this.relation('<', value, low, op), this.relation('>', value, high, op)), op);
    }
    // createBetween: literal bounds must be non-null and ordered, then value >= low AND value <= high.
    if (low instanceof ConstantExpr && high instanceof ConstantExpr) {
      const lv = low.value;
      const hv = high.value;
      if (lv === null || hv === null) throw this.fail(op, 'Illegal values of between, values can not be null!');
      let c: number;
      try {
        c = javaCompare(hv, lv);
      } catch (err) {
        if (err instanceof Sql92EvalError) throw this.fail(op, `Illegal values of between: ${err.message}`);
        throw err;
      }
      if (c < 0) {
        throw this.fail(op, `Illegal values of between, left value(${low}) must less than or equal to right value(${high})`);
      }
    }
    return this.checked(new AndExpr(this.relation('>=', value, low, op), this.relation('<=', value, high, op)), op);
  }

  private inList(value: Expr, op: Token, not: boolean): Expr {
    this.expect('(', '"(" after IN');
    const values = [this.stringLiteral()];
    while (this.at(',')) {
      this.lx.next();
      values.push(this.stringLiteral());
    }
    this.expect(')', '"," or ")" in the IN list');
    if (!(value instanceof PropertyExpr)) throw this.fail(op, `Expected a property for In expression, got: ${value}`);
    return this.checked(new InExpr(value, values, not), op);
  }

  private stringLiteral(): string {
    return this.expect('STRING', 'a string literal').text;
  }

  private unary(): Expr {
    const t = this.lx.peek();
    if (++this.nesting > MAX_EXPRESSION_DEPTH) throw this.fail(t, `expression nested deeper than ${MAX_EXPRESSION_DEPTH}`);
    try {
      return this.unaryBody(t);
    } finally {
      this.nesting--;
    }
  }

  private unaryBody(t: Token): Expr {
    switch (t.kind) {
      case '+':
        this.lx.next();
        return this.unary();
      case '-':
        this.lx.next();
        return this.checked(new NegateExpr(this.unary()), t);
      case 'NOT': {
        this.lx.next();
        const operandStart = this.lx.peek();
        return this.checked(new NotExpr(this.asBoolean(this.unary(), operandStart)), t);
      }
      default:
        return this.primary();
    }
  }

  private primary(): Expr {
    const t = this.lx.peek();
    switch (t.kind) {
      case 'STRING':
        this.lx.next();
        return new ConstantExpr(t.text, false);
      case 'DECIMAL':
        this.lx.next();
        return this.decimal(t);
      case 'FLOAT':
        this.lx.next();
        return this.float(t);
      case 'TRUE':
        this.lx.next();
        return TRUE;
      case 'FALSE':
        this.lx.next();
        return FALSE;
      case 'NULL':
        this.lx.next();
        return NULL;
      case 'ID':
        this.lx.next();
        return new PropertyExpr(t.image);
      case '(': {
        this.lx.next();
        const inner = this.or();
        this.expect(')', '")"');
        return this.checked(inner, t);
      }
      default:
        throw this.unexpected(t, 'a literal, a property name, "(", "+", "-" or NOT');
    }
  }

  /** ConstantExpression.createFromDecimal: Integer when it fits, else Long; beyond Long.MAX_VALUE is an error. */
  private decimal(t: Token): Expr {
    const digits = /[lL]$/.test(t.image) ? t.image.slice(0, -1) : t.image;
    const v = BigInt(digits);
    if (v > LONG_MAX) throw this.fail(t, `integer literal ${t.image} does not fit in a long`);
    return new ConstantExpr(v <= INT_MAX ? new JInt(Number(v)) : new JLong(v), false);
  }

  /** ConstantExpression.createFloat: a Double in [Double.MIN_VALUE, Double.MAX_VALUE]. */
  private float(t: Token): Expr {
    const v = Number(t.image);
    if (v === Infinity) throw this.fail(t, `${t.image} is greater than 1.7976931348623157E308`);
    if (v < DOUBLE_MIN_VALUE) throw this.fail(t, `${t.image} is less than 4.9E-324`);
    return new ConstantExpr(new JDouble(v), false);
  }
}
