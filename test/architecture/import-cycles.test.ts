// No import circles in src/ (issue #12). scripts/import-cycles.mjs lists every elementary cycle, type-only
// imports included (they vanish at run time but still tie the modules together).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findImportCycles, formatCycle, importsOf } from '../../scripts/import-cycles.mjs';
import { tempDir } from '../helpers/server.js';

const SRC = path.resolve(import.meta.dirname, '../../src');


describe('import cycles', () => {
  it('src/ has no import cycle', () => {
    const { files, cycles, truncated } = findImportCycles(SRC);
    expect(files).toBeGreaterThan(50);
    expect(truncated).toBe(false);
    const found = cycles.map(formatCycle);
    expect(found, `import cycles in src/:\n${found.join('\n')}`).toEqual([]);
  });

  it('the detector sees value, type-only, re-export and dynamic imports, and ignores comments and strings', () => {
    const dir = tempDir('cycles');
    try {
      const write = (name: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
        fs.writeFileSync(path.join(dir, name), text);
      };
      write('a.ts', "import { b } from './b.js';\nexport const a = b;\n");
      write('b.ts', "import type { C } from './sub/c.js';\nexport const b = 1;\n// import { a } from './a.js';\nconst s = \"import { a } from './a.js'\";\n");
      write('sub/c.ts', "export type C = number;\nexport { a } from '../a.js';\n");
      write('d.ts', "export const d = () => import('./e.js');\n");
      write('e.ts', "import {\n  type D,\n} from './d.js';\n");
      write('f.ts', "/* import './a.js' */ export const f = `${'./a.js'}`;\n");
      const { cycles } = findImportCycles(dir);
      expect(cycles.map((c) => [formatCycle(c), c.typeOnly])).toEqual([
        ['a.ts -> b.ts -> sub/c.ts -> a.ts', true],
        ['d.ts -> e.ts -> d.ts', true],
      ]);
      expect(importsOf("import x, { y } from './x.js';\nexport * from \"./z.js\";\nimport './side.js';")).toEqual([
        { spec: './x.js', typeOnly: false },
        { spec: './z.js', typeOnly: false },
        { spec: './side.js', typeOnly: false },
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
