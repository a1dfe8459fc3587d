// SQL92 message selectors (Java: filter/FilterFactory + SqlFilter + SelectorParser.parse, which caches both
// compiled expressions and parse failures).
import { type Expr, type PropertySource, Sql92EvalError } from './evaluate.js';
import { SqlParseError } from './lexer.js';
import { parseSelector } from './parser.js';

export { SqlParseError } from './lexer.js';
export { Sql92EvalError, type PropertyBytes, type PropertySource } from './evaluate.js';
export { propertyKeyBytes } from './values.js';
export { MAX_EXPRESSION_DEPTH } from './parser.js';

export interface CompiledFilter {
  readonly expression: string;
  /** True only when the selector evaluates to Boolean TRUE; FALSE, unknown (null) and Java runtime errors drop. */
  evaluate(props: PropertySource): boolean;
  /** TRUE/FALSE/null (unknown) as Java's BooleanExpression.evaluate returns it; throws Sql92EvalError where Java throws. */
  evaluateRaw(props: PropertySource): boolean | null;
}

class Sql92Filter implements CompiledFilter {
  constructor(
    readonly expression: string,
    private readonly root: Expr,
  ) {}

  evaluate(props: PropertySource): boolean {
    try {
      return this.root.evaluate(props) === true;
    } catch (err) {
      if (err instanceof Sql92EvalError) return false;
      throw err;
    }
  }

  evaluateRaw(props: PropertySource): boolean | null {
    return this.root.evaluate(props) as boolean | null;
  }

  toString(): string {
    return this.root.toString();
  }
}

/** Compiled selectors kept (Java keeps 100 in 4.9.x, a Caffeine cache in 5.x). */
export const SQL92_CACHE_SIZE = 1024;

/** Bounded LRU of selector → compiled filter or parse error (a Map iterates in insertion order). */
const cache = new Map<string, CompiledFilter | SqlParseError>();

/** Compiles (or finds in the cache) a selector; throws SqlParseError with the position and a readable reason. */
export function compileSql92(expression: string): CompiledFilter {
  let entry = cache.get(expression);
  if (entry !== undefined) {
    cache.delete(expression);
  } else {
    try {
      entry = new Sql92Filter(expression, parseSelector(expression));
    } catch (err) {
      if (!(err instanceof SqlParseError)) throw err;
      entry = err;
    }
    if (cache.size >= SQL92_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  cache.set(expression, entry);
  if (entry instanceof SqlParseError) throw entry;
  return entry;
}

/** Number of cached selectors (tests). */
export function sql92CacheSize(): number {
  return cache.size;
}
