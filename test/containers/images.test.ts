// The images themselves: who they run as, what they start, and how big they are (printed, and kept in
// docs/operations.md).
import { describe, expect, it } from 'vitest'
import { imageFacts, images } from '../support/containers.js'

describe('the images', () => {
  it('prints the sizes', async () => {
    const rows = []
    for (const [name, image] of Object.entries(images()))
      rows.push({ name, image, ...(await imageFacts(image)) })
    console.table(rows.map(({ name, image, sizeMB }) => ({ name, image, MB: sizeMB })))
    expect(rows.every((r) => r.sizeMB > 0)).toBe(true)
  })
})
