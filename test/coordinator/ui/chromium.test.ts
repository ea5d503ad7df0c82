// When the page tests run, skip or fail (test/support/chromium.ts): a missing Chromium skips them on a
// developer's machine and fails them on CI, where a skip would pass a run that never opened a page.
import { describe, expect, it } from 'vitest'
import { pageTestsPlan } from '../../support/chromium.js'

describe('the page tests’ plan', () => {
  it('runs them when Chromium is installed, on CI or not', () => {
    expect(pageTestsPlan(true, {})).toBe('run')
    expect(pageTestsPlan(true, { CI: 'true' })).toBe('run')
  })

  it('skips them without Chromium off CI', () => {
    expect(pageTestsPlan(false, {})).toBe('skip')
    expect(pageTestsPlan(false, { CI: '' })).toBe('skip')
    expect(pageTestsPlan(false, { CI: 'false' })).toBe('skip')
  })

  it('fails them without Chromium with CI=true', () => {
    expect(pageTestsPlan(false, { CI: 'true' })).toBe('fail')
  })
})
