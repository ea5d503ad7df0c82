// The hand-typed client answers with the types the app's routes declare: were a route's answer to
// change, `npm run typecheck` would fail here (hono/client infers the routes' types from AppType).
import type { hc, InferResponseType } from 'hono/client'
import { describe, expectTypeOf, it } from 'vitest'
import type { Client } from '../../src/client/index.js'
import type { AppType } from '../../src/coordinator/app.js'

type App = ReturnType<typeof hc<AppType>>
type Answer<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>

// (Answers with free JSON in them, such as DispatchView's event detail or a report's `observed`, are left
// out: hono/client turns an `unknown` field into an error message type.)
describe('preflight/client types', () => {
  it('match the app’s routes', () => {
    expectTypeOf<Answer<Client['registerSubagent']>>().toEqualTypeOf<
      InferResponseType<App['v1']['subagents']['$post'], 201>
    >()
    expectTypeOf<Answer<Client['createDispatch']>>().toEqualTypeOf<
      InferResponseType<App['v1']['dispatches']['$post'], 201>
    >()
    expectTypeOf<Answer<Client['cancelDispatch']>>().toEqualTypeOf<
      InferResponseType<App['v1']['dispatches'][':id']['cancel']['$post'], 200>
    >()
    expectTypeOf<Answer<Client['retryDispatch']>>().toEqualTypeOf<
      InferResponseType<App['v1']['dispatches'][':id']['retry']['$post'], 201>
    >()
    expectTypeOf<Answer<Client['listDispatches']>>().toEqualTypeOf<
      InferResponseType<App['v1']['dispatches']['$get'], 200>
    >()
    expectTypeOf<Answer<Client['renewLease']>>().toEqualTypeOf<
      InferResponseType<App['v1']['dispatches'][':id']['heartbeat']['$post'], 200>
    >()
    expectTypeOf<Answer<Client['putPreflightReport']>>().toEqualTypeOf<
      InferResponseType<App['v1']['dispatches'][':id']['preflight']['$put'], 200>
    >()
    expectTypeOf<Answer<Client['appendEvent']>>().toEqualTypeOf<
      InferResponseType<App['v1']['dispatches'][':id']['events']['$post'], 201>
    >()
    expectTypeOf<Answer<Client['completeDispatch']>>().toEqualTypeOf<
      InferResponseType<App['v1']['dispatches'][':id']['complete']['$post'], 200>
    >()
    expectTypeOf<Answer<Client['summariseReports']>>().toEqualTypeOf<
      InferResponseType<App['v1']['reports']['summary']['$get'], 200>
    >()
    expectTypeOf<Answer<Client['listTokens']>>().toEqualTypeOf<
      InferResponseType<App['v1']['tokens']['$get'], 200>
    >()
    expectTypeOf<Answer<Client['listWebhooks']>>().toEqualTypeOf<
      InferResponseType<App['v1']['webhooks']['$get'], 200>
    >()
  })
})
