// The JUnit schemas of test/cli/fixtures/ (Ant's and Jenkins'), and xmllint to validate against them.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

const FIXTURES = join(import.meta.dirname, '..', 'cli', 'fixtures')
export const SCHEMAS = { ant: join(FIXTURES, 'junit-ant.xsd'), jenkins: join(FIXTURES, 'junit-jenkins.xsd') }

// xmllint's verdict on `xml` against an XSD: exit 0 and "validates", or what it refused.
export function validate(xml: string, xsd: string): { ok: boolean; said: string } {
  const run = spawnSync('xmllint', ['--noout', '--schema', xsd, '-'], { input: xml, encoding: 'utf8' })
  if (run.error)
    throw new Error(`xmllint could not run (apt-get install libxml2-utils): ${run.error.message}`)
  return { ok: run.status === 0, said: run.stderr }
}
