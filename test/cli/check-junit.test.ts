// `--format junit`: failures and errors apart, counted, valid against the schemas CI tools read it by.
import { describe, expect, it } from 'vitest'
import { junit } from '../../src/cli/check-junit.js'
import { MIXED, report, result } from '../support/check-fixtures.js'
import { SCHEMAS, validate } from '../support/junit-schemas.js'

describe('JUnit', () => {
  const xml = junit(MIXED, 'ci-runner')

  it('writes <failure> for unmet, <error> for error, and counts them on the <testsuite>', () => {
    expect(xml.match(/<testcase /g)).toHaveLength(4)
    expect(xml.match(/<failure /g)).toHaveLength(2)
    expect(xml.match(/<error /g)).toHaveLength(1)
    expect(xml).toContain('<error message="error: timeout: no verdict within 10 ms" type="timeout">')
    expect(xml).toMatch(
      /<testsuite name="\/work\/ws" tests="4" failures="2" errors="1" skipped="0" time="0.250"/,
    )
  })

  it.each(Object.entries(SCHEMAS))('is valid against the %s schema', (_, xsd) => {
    const nasty = report([
      result({
        status: 'unmet',
        requirement: 'x<y>"z"&\'.txt',
        reason: 'no-match',
        observed: { why: '\u0001' },
      }),
    ])
    for (const doc of [xml, junit(nasty), junit(report([])), junit(report([result({ status: 'met' })]))]) {
      expect(validate(doc, xsd)).toMatchObject({ ok: true })
    }
  })

  // why the counts are not on <testsuites> too: Ant's schema allows no attribute there
  it('would not be valid against Ant’s schema with counts on <testsuites>', () => {
    expect(validate(xml.replace('<testsuites>', '<testsuites tests="4">'), SCHEMAS.ant)).toMatchObject({
      ok: false,
    })
    expect(validate(xml.replace('<testsuites>', '<testsuites tests="4">'), SCHEMAS.jenkins)).toMatchObject({
      ok: true,
    })
  })
})
