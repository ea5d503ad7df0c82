import { describe, expect, it } from 'vitest'
import { render } from '../../src/cli/check-format.js'
import { MIXED } from '../support/check-fixtures.js'

describe('text', () => {
  it('colours the statuses when asked, and only then', () => {
    expect(render(MIXED, 'text', { colour: true })).toContain('\u001b[31munmet')
    expect(render(MIXED, 'text', { colour: false })).not.toContain('\u001b[')
    expect(render(MIXED, 'json')).not.toContain('\u001b[')
  })
})
