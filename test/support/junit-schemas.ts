// The JUnit schemas of test/cli/fixtures/ (Ant's and Jenkins'), and libxml2's XSD validator to check against them.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { XmlDocument, XmlParseError, XmlValidateError, XsdValidator } from 'libxml2-wasm'

// libxml2-wasm rather than xmllint-wasm: both are libxml2 built to WebAssembly, MIT, without dependencies,
// and run on Node 20 and 24, but xmllint-wasm runs the xmllint program in a new worker thread per call
// (~0.2 s of CPU each, measured) where libxml2-wasm calls libxml2's XSD validator in this thread (~0.02 s).
// Its API is 0.x, hence the exact pin in package.json.
const FIXTURES = join(import.meta.dirname, '..', 'cli', 'fixtures')
export const SCHEMAS = { ant: join(FIXTURES, 'junit-ant.xsd'), jenkins: join(FIXTURES, 'junit-jenkins.xsd') }

// libxml2's verdict on `xml` against the XSD file `xsd`: ok, or what it refused ('' when ok).
// A schema that does not load throws: that is a broken fixture, not an invalid document.
export function validate(xml: string, xsd: string): { ok: boolean; said: string } {
  // freed by hand, in reverse: libxml2's memory lives in the WebAssembly heap, out of the GC's reach
  const releases: { dispose(): void }[] = []
  try {
    const schema = XmlDocument.fromString(readFileSync(xsd, 'utf8'), { url: xsd })
    releases.push(schema)
    const validator = XsdValidator.fromDoc(schema)
    releases.push(validator)
    return verdict(validator, xml)
  } finally {
    for (const release of releases.reverse()) release.dispose()
  }
}

function verdict(validator: XsdValidator, xml: string): { ok: boolean; said: string } {
  let doc: XmlDocument | undefined
  try {
    doc = XmlDocument.fromString(xml)
    validator.validate(doc)
    return { ok: true, said: '' }
  } catch (error) {
    if (error instanceof XmlParseError || error instanceof XmlValidateError)
      return { ok: false, said: error.message }
    throw error
  } finally {
    doc?.dispose()
  }
}
