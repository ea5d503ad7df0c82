// Writes schemas/*.schema.json from the zod contract (`npm run schemas`); test/contract checks for drift.
import { writeFileSync } from 'node:fs'
import { renderSchemas } from '../src/contract/json-schema.js'

for (const [file, text] of Object.entries(renderSchemas())) {
  writeFileSync(new URL(`../schemas/${file}`, import.meta.url), text)
  console.log(`wrote schemas/${file}`)
}
