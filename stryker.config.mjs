// StrykerJS over the code that decides a verdict (docs/mutation.md). `npm run test:mutation`.

// Mutants that cannot change behaviour, one by one: the file, the code on the mutant's line, its mutator and
// replacement, and why. They run like every other mutant; the gate (scripts/mutation-gate.ts) counts one
// that survives as equivalent instead of failing, and fails on an entry that matches no mutant. The
// product code carries no Stryker comments (docs/mutation.md, "Equivalent mutants").
const RACE =
  'no test can time that race: every directory walked is real and lstat does not follow the last name, so the kernel gives ENOENT, ENOTDIR or ELOOP only for an entry removed or replaced during the walk'
const NO_ENTRY = 'equivalent: a thrown ENOENT is read as missing (or gone) right after'
const BYTES_AGAIN =
  'a shortcut: reading as bytes what reads the same as a string gives the same names (names.ts spells valid UTF-8 as its text)'
const LINKED = 'only a link followed on the way makes a real path repeat; checking without one finds nothing'
export const equivalent = [
  {
    file: 'worker/checks/access.ts',
    code: 'if (real !== null && !walk.cache.has(real)) walk.cache.set(real, real)',
    mutants: [
      ['ConditionalExpression', 'true'],
      ['ConditionalExpression', 'false'],
      ['LogicalOperator', 'real !== null || !walk.cache.has(real)'],
      ['EqualityOperator', 'real === null'],
      ['BooleanLiteral', 'walk.cache.has(real)'],
    ],
    why: 'a memo; it changes a verdict only for a file system that changes during one verify()',
  },
  {
    file: 'worker/checks/access.ts',
    code: 'const info = quietly(() => lstatSync(fsPath(entry), { throwIfNoEntry: false }))',
    mutants: [
      ['ObjectLiteral', '{}'],
      ['BooleanLiteral', 'true'],
    ],
    why: NO_ENTRY,
  },
  {
    file: 'worker/checks/access.ts',
    code: 'if (text === undefined) return null',
    mutants: [['ConditionalExpression', 'false']],
    why: 'only a link removed since the lstat above; the mutant throws (error) where this answers unreachable',
  },
  {
    file: 'worker/checks/access.ts',
    code: 'const info = quietly(() => statSync(fsPath(real), { throwIfNoEntry: false }))',
    mutants: [
      ['ObjectLiteral', '{}'],
      ['BooleanLiteral', 'true'],
    ],
    why: NO_ENTRY,
  },
  {
    file: 'worker/checks/access.ts',
    code: 'return info?.isDirectory() === true && mayAccess(who, info, Access.Execute)',
    mutants: [['OptionalChaining', 'info.isDirectory']],
    why: '`real` was just found by lstat; only a race removes it',
  },
  {
    file: 'worker/checks/access.ts',
    code: 'if (isGone(code)) return undefined',
    mutants: [['ConditionalExpression', 'false']],
    why: RACE,
  },
  {
    file: 'worker/checks/access.ts',
    code: "const isGone = (code: string | undefined) => code === 'ENOENT'",
    mutants: [
      ['ArrowFunction', '() => undefined'],
      ['ConditionalExpression', 'false'],
      ['LogicalOperator', "(code === 'ENOENT' || code === 'ENOTDIR') && code === 'ELOOP'"],
      ['LogicalOperator', "code === 'ENOENT' && code === 'ENOTDIR'"],
      ['StringLiteral', '""'],
    ],
    why: RACE,
  },
  {
    file: 'worker/checks/listing.ts',
    code: 'if (statSync(at).size > BIG_DIRECTORY) return this.listInTurns(dir, turns)',
    mutants: [['EqualityOperator', 'statSync(at).size >= BIG_DIRECTORY']],
    why: 'a directory of exactly 8 KiB is read either way, both whole',
  },
  {
    file: 'worker/checks/listing.ts',
    code: 'if (!entries.some(mayBeBytes)) return this.keep(dir, entries)',
    mutants: [['ConditionalExpression', 'false']],
    why: BYTES_AGAIN,
  },
  {
    file: 'worker/checks/listing.ts',
    code: "const mayBeBytes = (entry: Entry) => entry.name.includes('\\uFFFD')",
    mutants: [['StringLiteral', '""']],
    why: BYTES_AGAIN,
  },
  {
    file: 'worker/checks/names.ts',
    code: "if (!real.includes('\\uFFFD')) return real",
    mutants: [
      ['ConditionalExpression', 'false'],
      ['StringLiteral', '""'],
    ],
    why: BYTES_AGAIN,
  },
  {
    file: 'worker/checks/pattern.ts',
    code: 'const CLASSES = /\\\\[\\s\\S]|\\[(?:\\\\[\\s\\S]|[^\\\\\\]])*\\]/g',
    mutants: [
      ['Regex', '/\\\\[\\s\\S]|\\[(?:\\\\[\\S\\S]|[^\\\\\\]])*\\]/g'],
      ['Regex', '/\\\\[\\S\\S]|\\[(?:\\\\[\\s\\S]|[^\\\\\\]])*\\]/g'],
    ],
    why: 'each differs only for a backslash before a white-space character. In a class picomatch never writes one (its classes escape "[", "]", "^", "-"; 1.5 million generated patterns); outside one, the white space left unconsumed opens no class either way',
  },
  {
    file: 'worker/checks/names.ts',
    code: 'Buffer.of(p.charCodeAt(0) - 0xdc00)',
    mutants: [['ArithmeticOperator', 'p.charCodeAt(0) + 0xdc00']],
    why: 'Buffer.of keeps the low byte of a value, which adding or subtracting 0xdc00 leaves as it is',
  },
  {
    file: 'worker/checks/paths.ts',
    code: 'if (!lstatSync(abs, { throwIfNoEntry: false })) return unmet(0)',
    mutants: [
      ['ObjectLiteral', '{}'],
      ['BooleanLiteral', 'true'],
    ],
    why: NO_ENTRY,
  },
  {
    file: 'worker/checks/paths.ts',
    code: "if (!names.includes('.git') && resolves(join(ctx.workspace, plan.base)) === direct) {",
    mutants: [
      ['ConditionalExpression', 'false'],
      ['BlockStatement', '{}'],
    ],
    why: 'the per-directory path below gives the same frames where no directory is a link, with a realpath each',
  },
  {
    file: 'worker/checks/paths.ts',
    code: 'frame = { rel, real: childPath(frame.real, name), depth: 0, parent: frame, linked: false }',
    mutants: [['BooleanLiteral', 'true']],
    why: LINKED,
  },
  {
    file: 'worker/checks/paths.ts',
    code: 'linked: frame.linked || real !== childPath(frame.real, name),',
    mutants: [['ConditionalExpression', 'true']],
    why: LINKED,
  },
  {
    file: 'worker/checks/resolve.ts',
    code: 'info = statSync(path, { throwIfNoEntry: false })',
    mutants: [
      ['ObjectLiteral', '{}'],
      ['BooleanLiteral', 'true'],
    ],
    why: NO_ENTRY,
  },
  {
    file: 'worker/checks/resolve.ts',
    code: 'return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true',
    mutants: [
      ['ObjectLiteral', '{}'],
      ['BooleanLiteral', 'true'],
    ],
    why: NO_ENTRY,
  },
  {
    file: 'worker/checks/turns.ts',
    code: 'return ++this.entries % BATCH === 0 && this.over()',
    mutants: [['UpdateOperator', '--this.entries']],
    why: 'looking at the clock more often changes when the walk yields, not what it finds (counting down ends a batch as often: -256 % 256 is -0)',
  },
  {
    file: 'worker/checks/turns.ts',
    code: 'return performance.now() - this.sliceStart > this.sliceMs',
    mutants: [['EqualityOperator', 'performance.now() - this.sliceStart >= this.sliceMs']],
    why: 'a slice used up to the microsecond, or one microsecond past it',
  },
  {
    file: 'worker/checks/walk.ts',
    code: "return { rel: '', real: realRoot, depth: 0, linked: false }",
    mutants: [['BooleanLiteral', 'true']],
    why: LINKED,
  },
  {
    file: 'worker/checks/walk.ts',
    code: 'const enterable = isLink || entry.isDirectory()',
    mutants: [['ConditionalExpression', 'true']],
    why: 'asking the pruner about a file changes nothing, a file is never entered',
  },
  {
    file: 'worker/checks/walk.ts',
    code: 'const mayRepeat = isLink || frame.linked',
    mutants: [['ConditionalExpression', 'true']],
    why: LINKED,
  },
  {
    file: 'worker/checks/walk.ts',
    code: 'linked: frame.linked || isLink,',
    mutants: [['ConditionalExpression', 'true']],
    why: LINKED,
  },
  {
    file: 'worker/lifecycle.ts',
    code: "let ending: Ending = 'abandoned'",
    mutants: [['StringLiteral', '""']],
    why: "read only when abandon() itself throws (a throwing log), and close() reads '' as it reads 'abandoned'",
  },
  {
    file: 'worker/lifecycle.ts',
    code: 'if (err instanceof Abandoned) Object.assign(had, err.had)',
    mutants: [['ConditionalExpression', 'true']],
    why: 'any other error has no `had`, and Object.assign skips undefined',
  },
  {
    file: 'worker/run/git-home.ts',
    code: 'const uid = process.getuid?.()',
    mutants: [['OptionalChaining', 'process.getuid()']],
    why: 'every POSIX platform, where the worker runs, has getuid',
  },
  {
    file: 'worker/run/git-home.ts',
    code: "process.once('exit', () => rmSync(dir, { recursive: true, force: true }))",
    mutants: [
      ['StringLiteral', '""'],
      ['ArrowFunction', '() => undefined'],
      ['ObjectLiteral', '{}'],
      ['BooleanLiteral', 'false'],
    ],
    why: 'runs at exit, which no in-process test sees; a child process shows it (git-env.test.ts)',
  },
  {
    file: 'src/coordinator/dispatch/preflight.ts',
    code: 'if (d.previous_report && d.previous_decision) {',
    mutants: [['LogicalOperator', 'd.previous_report || d.previous_decision']],
    why: 'the report and its decision are two NOT NULL columns of one stored row: both are there or neither',
  },
]

export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // CI runs against the last full run's results (docs/mutation.md, "Incremental runs"): only mutants in
  // changed code, or reached by changed tests, run again. `STRYKER_FORCE=1 npm run test:mutation` runs all.
  incremental: true,
  incrementalFile: '.ci/mutation-baseline.json',
  mutate: [
    'worker/checks/*.ts',
    '!worker/checks/types.ts',
    'worker/run/{git-env,git-home,job-git,paths}.ts',
    'src/coordinator/dispatch/{judge,preflight,claim-hints}.ts',
    'src/contract/{light,requirements}.ts',
    'worker/lifecycle.ts',
    'worker/claim.ts',
    'worker/{verify,env}.ts',
  ],
  concurrency: 2,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowEmojis: false, logTests: false },
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['dist', 'coverage', 'reports', '.preflight', '.ci/node24', '*.log'],
  timeoutMS: 5_000,
}
