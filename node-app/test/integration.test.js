'use strict'

// The app against the real database (DATABASE_URL, normally the embedded one reset to scale 1, seed 42),
// once with the JavaScript client (PG_NATIVE=0) and once with libpq (PG_NATIVE=1). Expected bodies are
// built by PostgreSQL itself (json_build_object, to_char), independently of the app's formatting code.
// Writes create their own rows, so the test does not depend on what other tests did to the data.

const test = require('node:test')
const assert = require('node:assert/strict')
const { Pool } = require('pg')
const { startApp, stopApp } = require('../testing/server')
const { request, json } = require('../testing/http')
const { assertWire, assertError, assertHostile } = require('../testing/expect')
const { startProxy } = require('../testing/proxy')
const cases = require('../testing/hostile-cases')

const DATABASE_URL = process.env.DATABASE_URL

const TS = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
const ITEM_SUMMARY = `json_build_object('id', id, 'category_id', category_id, 'seller_id', seller_id, 'title', title,
  'initial_price_cents', initial_price_cents, 'max_bid_cents', max_bid_cents, 'bid_count', bid_count,
  'start_time', ${TS('start_time')}, 'end_time', ${TS('end_time')})`
const BID = `json_build_object('id', id, 'item_id', item_id, 'bidder_id', bidder_id, 'amount_cents', amount_cents,
  'created_at', ${TS('created_at')})`
const USER = `json_build_object('id', id, 'nickname', nickname, 'region_id', region_id, 'rating', rating,
  'created_at', ${TS('created_at')})`

const unique = (prefix) => `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`

if (!DATABASE_URL) {
  test('integration: needs a database', () => {
    assert.fail(
      'DATABASE_URL is not set. The integration test needs the real database: ' +
        'run `DATABASE_URL=$(../bidbench db url) node --test` (or `./bidbench test`), after `./bidbench db up` and `./bidbench db seed`.',
    )
  })
} else {
  // Nothing here may hang, and a shared database may be reset by another run while this one runs (its
  // connections terminated, the database briefly missing). Such a moment is retried for a few seconds:
  // a 503 from the app or a lost connection of the direct pool. Anything else fails at once.
  const TIMEOUT = { timeout: 180_000 }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
  const TRANSIENT = /terminat|does not exist|ECONNREFUSED|ECONNRESET|not queryable|Connection terminated/i
  async function retrying(attempt) {
    for (let i = 1; ; i++) {
      try {
        const result = await attempt()
        if (result && result.status === 503 && i < 20) {
          await sleep(250)
          continue
        }
        return result
      } catch (err) {
        if (i < 20 && TRANSIENT.test(`${err.code} ${err.message}`)) {
          await sleep(250)
          continue
        }
        throw err
      }
    }
  }

  let db
  test.before(() => {
    db = new Pool({ connectionString: DATABASE_URL, max: 2, connectionTimeoutMillis: 10_000, query_timeout: 30_000, allowExitOnIdle: true })
    db.on('error', (err) => console.error(`direct database connection lost: ${err.message}`))
  })
  test.after(async () => {
    let timer
    await Promise.race([db.end(), new Promise((resolve) => (timer = setTimeout(resolve, 2000)))])
    clearTimeout(timer)
  })

  const rows = async (sql, params = []) => (await retrying(() => db.query(sql, params))).rows
  const one = async (sql, params = []) => (await rows(sql, params))[0]
  const jsonRows = async (sql, params) => (await rows(sql, params)).map((r) => r.j)

  for (const native of ['0', '1']) {
    const driver = native === '1' ? 'pg-native' : 'pg'

    test(`integration with ${driver} (PG_NATIVE=${native})`, TIMEOUT, async (t) => {
      const app = await startApp({ DATABASE_URL, PG_NATIVE: native, DB_POOL_SIZE: '4' })
      t.after(() => stopApp(app))
      const get = async (path) => {
        const response = await retrying(() => request(app.port, { path }))
        assertWire(response)
        return response
      }
      const send = async (method, path, body) => {
        const response = await retrying(() => json(app.port, method, path, body))
        assertWire(response, { method })
        return response
      }

      await t.test('start-up line', () => {
        assert.equal(app.info.pg_native, native === '1')
        assert.equal(app.info.pg_native_version === null, false)
        assert.equal(app.info.db_pool_size, 4)
        assert.equal(app.startLines.length, 1)
        const password = new URL(DATABASE_URL).password
        if (password) assert.ok(!app.logs().includes(`:${password}@`), 'password not logged')
      })

      await t.test('health and readiness', async () => {
        assert.equal((await get('/health')).body, '{"status":"ok"}')
        const ready = await get('/ready')
        assert.equal(ready.status, 200)
        assert.equal(ready.body, '{"status":"ready"}')
      })

      await t.test('regions and categories, ordered by id', async () => {
        const regions = await jsonRows(`SELECT json_build_object('id', id, 'name', name) AS j FROM regions ORDER BY id`)
        assert.ok(regions.length > 0, 'seeded regions')
        assert.equal((await get('/regions')).body, JSON.stringify({ regions }))
        const categories = await jsonRows(`SELECT json_build_object('id', id, 'name', name) AS j FROM categories ORDER BY id`)
        assert.equal((await get('/categories')).body, JSON.stringify({ categories }))
      })

      await t.test('open items of a category, paged', async () => {
        const { category_id: id } = await one(`SELECT category_id FROM items WHERE end_time > now() GROUP BY category_id ORDER BY count(*) DESC, category_id LIMIT 1`)
        for (const [query, limit, offset] of [['', 20, 0], ['?limit=5&offset=2', 5, 2], ['?offset=3', 20, 3], ['?limit=100', 100, 0]]) {
          const items = await jsonRows(
            `SELECT ${ITEM_SUMMARY} AS j FROM items WHERE category_id = $1 AND end_time > now() ORDER BY end_time, id LIMIT $2 OFFSET $3`,
            [id, limit, offset],
          )
          assert.equal((await get(`/categories/${id}/items${query}`)).body, JSON.stringify({ items, limit, offset }))
        }
        const empty = await get(`/categories/${id}/items?offset=10000`)
        assert.equal(empty.status, 200)
        assert.equal(empty.body, '{"items":[],"limit":20,"offset":10000}')
        assertError(await get('/categories/2147483647/items'), 404, 'category not found')
      })

      await t.test('item detail with the seller nickname and the five highest bids', async () => {
        const { item_id: id } = await one(`SELECT item_id FROM bids GROUP BY item_id HAVING count(*) > 5 ORDER BY item_id LIMIT 1`)
        const item = await one(
          `SELECT json_build_object('id', i.id, 'category_id', i.category_id, 'seller_id', i.seller_id, 'seller_nickname', u.nickname,
             'title', i.title, 'description', i.description, 'initial_price_cents', i.initial_price_cents,
             'max_bid_cents', i.max_bid_cents, 'bid_count', i.bid_count, 'start_time', ${TS('i.start_time')},
             'end_time', ${TS('i.end_time')}) AS j FROM items i JOIN users u ON u.id = i.seller_id WHERE i.id = $1`,
          [id],
        )
        const top = await jsonRows(`SELECT ${BID} AS j FROM bids WHERE item_id = $1 ORDER BY amount_cents DESC, id LIMIT 5`, [id])
        assert.equal(top.length, 5)
        assert.equal((await get(`/items/${id}`)).body, JSON.stringify({ ...item.j, top_bids: top }))
        assertError(await get('/items/2147483647'), 404, 'item not found')
      })

      await t.test('bids of an item, paged', async () => {
        const { item_id: id } = await one(`SELECT item_id FROM bids GROUP BY item_id HAVING count(*) > 3 ORDER BY item_id DESC LIMIT 1`)
        for (const [query, limit, offset] of [['', 20, 0], ['?limit=2&offset=1', 2, 1]]) {
          const bids = await jsonRows(`SELECT ${BID} AS j FROM bids WHERE item_id = $1 ORDER BY amount_cents DESC, id LIMIT $2 OFFSET $3`, [id, limit, offset])
          assert.equal((await get(`/items/${id}/bids${query}`)).body, JSON.stringify({ bids, limit, offset }))
        }
        assert.equal((await get(`/items/${id}/bids?offset=10000`)).body, '{"bids":[],"limit":20,"offset":10000}')
        assertError(await get('/items/2147483647/bids'), 404, 'item not found')
      })

      await t.test('users: get, create, duplicate nickname, unknown region', async () => {
        const user = await one(`SELECT ${USER} AS j FROM users ORDER BY id LIMIT 1`)
        assert.equal((await get(`/users/${user.j.id}`)).body, JSON.stringify(user.j))
        assertError(await get('/users/2147483647'), 404, 'user not found')

        const nickname = unique('n').slice(0, 32)
        const { region_id: regionId } = await one(`SELECT id AS region_id FROM regions ORDER BY id DESC LIMIT 1`)
        const created = await send('POST', '/users', { nickname, region_id: regionId })
        assert.equal(created.status, 201)
        const body = created.json()
        const stored = await one(`SELECT ${USER} AS j FROM users WHERE id = $1`, [body.id])
        assert.equal(created.body, JSON.stringify(stored.j))
        assert.equal(body.rating, 0)
        assertError(await send('POST', '/users', { nickname, region_id: regionId }), 409, 'nickname already taken')
        assertError(await send('POST', '/users', { nickname: unique('r').slice(0, 32), region_id: 2147483647 }), 404, 'region not found')
      })

      await t.test('items: create, update, delete', async () => {
        const { id: sellerId } = await one(`SELECT id FROM users ORDER BY id LIMIT 1`)
        const { id: categoryId } = await one(`SELECT id FROM categories ORDER BY id LIMIT 1`)
        const title = `caf\u00e9 \u{1F600} "quoted" \\ ${unique('t')}`
        const request = { seller_id: sellerId, category_id: categoryId, title, description: 'line\nbreak', initial_price_cents: 100000000000, duration_seconds: 86400 }
        const created = await send('POST', '/items', request)
        assert.equal(created.status, 201)
        const item = created.json()
        assert.deepEqual(Object.keys(item), ['id', 'category_id', 'seller_id', 'title', 'description', 'initial_price_cents', 'max_bid_cents', 'bid_count', 'start_time', 'end_time'])
        assert.equal(item.title, title)
        assert.equal(item.initial_price_cents, 100000000000)
        assert.equal(item.max_bid_cents, 0)
        assert.equal(item.bid_count, 0)
        assert.equal(Date.parse(item.end_time) - Date.parse(item.start_time), 86400 * 1000)
        const stored = await one(
          `SELECT json_build_object('id', id, 'category_id', category_id, 'seller_id', seller_id, 'title', title, 'description', description,
             'initial_price_cents', initial_price_cents, 'max_bid_cents', max_bid_cents, 'bid_count', bid_count,
             'start_time', ${TS('start_time')}, 'end_time', ${TS('end_time')}) AS j FROM items WHERE id = $1`,
          [item.id],
        )
        assert.equal(created.body, JSON.stringify(stored.j))

        const detail = (await get(`/items/${item.id}`)).json()
        assert.deepEqual(detail.top_bids, [])
        assert.equal(detail.seller_id, sellerId)
        assert.equal((await get(`/items/${item.id}/bids`)).body, '{"bids":[],"limit":20,"offset":0}', 'an existing item without bids is a 200')

        assertError(await send('POST', '/items', { ...request, seller_id: 2147483647 }), 404, 'seller or category not found')
        assertError(await send('POST', '/items', { ...request, category_id: 2147483647 }), 404, 'seller or category not found')

        const updated = await send('PUT', `/items/${item.id}`, { title: 'renamed', description: '' })
        assert.equal(updated.status, 200)
        assert.equal(updated.body, JSON.stringify({ ...item, title: 'renamed', description: '' }))
        assertError(await send('PUT', '/items/2147483647', { title: 'x', description: '' }), 404, 'item not found')

        const removed = await send('DELETE', `/items/${item.id}`)
        assert.equal(removed.status, 200)
        assert.equal(removed.body, `{"id":${item.id},"deleted":true}`)
        assertError(await send('DELETE', `/items/${item.id}`), 404, 'item not found')
        assertError(await get(`/items/${item.id}`), 404, 'item not found')
      })

      await t.test('bids: minimum, ended auction, unknown item or bidder, success', async () => {
        const { id: bidder } = await one(`SELECT id FROM users ORDER BY id DESC LIMIT 1`)
        const created = (await send('POST', '/items', { seller_id: 1, category_id: 1, title: 'bid target', description: '', initial_price_cents: 500, duration_seconds: 60 })).json()
        const path = `/items/${created.id}/bids`
        assertError(await send('POST', path, { bidder_id: bidder, amount_cents: 499 }), 409, 'bid must be at least 500 cents')
        const first = await send('POST', path, { bidder_id: bidder, amount_cents: 500 })
        assert.equal(first.status, 201)
        const bid = first.json()
        assert.deepEqual(Object.keys(bid), ['id', 'item_id', 'bidder_id', 'amount_cents', 'created_at'])
        assert.equal(bid.amount_cents, 500)
        assert.match(bid.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
        assertError(await send('POST', path, { bidder_id: bidder, amount_cents: 500 }), 409, 'bid must be at least 501 cents')
        assertError(await send('POST', path, { bidder_id: 2147483647, amount_cents: 10000 }), 404, 'bidder not found')
        assertError(await send('POST', '/items/2147483647/bids', { bidder_id: bidder, amount_cents: 10000 }), 404, 'item not found')
        const after = (await get(`/items/${created.id}`)).json()
        assert.equal(after.max_bid_cents, 500)
        assert.equal(after.bid_count, 1, 'the failed bids left nothing behind')

        const ended = await one(`SELECT id FROM items WHERE end_time < now() ORDER BY id LIMIT 1`)
        assertError(await send('POST', `/items/${ended.id}/bids`, { bidder_id: bidder, amount_cents: 100000000000 }), 409, 'auction has ended')
      })

      await t.test('concurrent bids on one item: no lost update', async () => {
        const created = (await send('POST', '/items', { seller_id: 1, category_id: 1, title: 'race', description: '', initial_price_cents: 100, duration_seconds: 600 })).json()
        const amounts = Array.from({ length: 40 }, (_, i) => 100 + i * 7).sort(() => Math.random() - 0.5)
        const responses = await Promise.all(
          amounts.map((amount, i) => retrying(() => json(app.port, 'POST', `/items/${created.id}/bids`, { bidder_id: 1 + (i % 5), amount_cents: amount }))),
        )
        const won = responses.filter((r) => r.status === 201)
        for (const r of responses) {
          if (r.status !== 201) assert.match(r.json().error.message, /^bid must be at least \d+ cents$/)
        }
        const check = await one(
          `SELECT i.max_bid_cents, i.bid_count, (SELECT max(amount_cents) FROM bids WHERE item_id = i.id) AS max, (SELECT count(*)::int FROM bids WHERE item_id = i.id) AS count FROM items i WHERE i.id = $1`,
          [created.id],
        )
        assert.equal(check.bid_count, won.length)
        assert.equal(check.count, won.length)
        assert.equal(Number(check.max_bid_cents), Math.max(...amounts))
        assert.equal(Number(check.max), Math.max(...amounts))
      })

      await t.test('hostile inputs get exactly the contract 4xx', async (t2) => {
        for (const testCase of cases) {
          await t2.test(testCase.name, async () => {
            assertHostile(await retrying(() => request(app.port, testCase.request)), testCase, { live: true })
          })
        }
      })

      await t.test('still healthy, no internal errors logged; SIGTERM exits 0', async () => {
        assert.equal((await get('/ready')).status, 200)
        assert.doesNotMatch(app.logs(), /internal error|unhandled/)
        assert.equal(await stopApp(app), 0)
      })
    })

    test(`database outage with ${driver}: 503 while down, recovery without restart`, TIMEOUT, async (t) => {
      const target = new URL(DATABASE_URL)
      const proxy = await startProxy(target.hostname, Number(target.port || 5432))
      const viaProxy = new URL(DATABASE_URL)
      viaProxy.hostname = '127.0.0.1'
      viaProxy.port = String(proxy.port)
      const app = await startApp({ DATABASE_URL: viaProxy.toString(), PG_NATIVE: native, DB_POOL_SIZE: '3' })
      t.after(async () => {
        await stopApp(app)
        await proxy.stop()
      })
      const burst = () => Promise.all(Array.from({ length: 6 }, () => request(app.port, { path: '/regions' })))
      // All 200, allowing for a reset of the shared database by another run (see retrying).
      const steadyBurst = async () => {
        for (let i = 0; i < 20; i++) {
          const all = await burst()
          if (all.every((r) => r.status === 200)) return all
          await sleep(250)
        }
        return burst()
      }

      for (const r of await steadyBurst()) assert.equal(r.status, 200)
      await proxy.stop()
      for (const r of await burst()) assertError(r, 503, 'database unavailable')
      assertError(await request(app.port, { path: '/ready' }), 503, 'database unavailable')
      assert.equal((await request(app.port, { path: '/health' })).status, 200)

      await proxy.start()
      let ready
      for (let attempt = 0; attempt < 50; attempt++) {
        ready = await request(app.port, { path: '/ready' })
        if (ready.status === 200) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.equal(ready.status, 200, 'ready again once the database is back')
      for (const r of await steadyBurst()) assert.equal(r.status, 200)
      assert.equal(app.child.exitCode, null, 'never crashed')
      assert.doesNotMatch(app.logs(), /internal error|unhandled/)
    })
  }

  test('BIDBENCH_UNFAIR_UNSORTED=1 warns loudly and still serves', TIMEOUT, async (t) => {
    const app = await startApp({ DATABASE_URL, BIDBENCH_UNFAIR_UNSORTED: '1' })
    t.after(() => stopApp(app))
    assert.equal(app.info.unfair_unsorted, true)
    assert.match(app.logs(), /BIDBENCH_UNFAIR_UNSORTED=1: list queries run WITHOUT their ORDER BY/)
    const regions = await retrying(() => request(app.port, { path: '/regions' }))
    assert.equal(regions.status, 200)
    assert.equal(regions.json().regions.length, Number((await one('SELECT count(*) FROM regions')).count))
  })

  // The response of the per-field app must be the honest app's, byte for byte, but for the clock readings
  // (Date, Server-Timing values); only the statements differ, which the debug log shows by name.
  for (const native of ['0', '1']) {
    const driver = native === '1' ? 'pg-native' : 'pg'
    test(`BIDBENCH_UNFAIR_PER_FIELD=1 with ${driver}: GET /items/{id} answers as the honest app, from eleven SELECTs`, TIMEOUT, async (t) => {
      const env = { DATABASE_URL, PG_NATIVE: native, DB_POOL_SIZE: '2', LOG_LEVEL: 'debug' }
      const [honest, unfair] = await Promise.all([startApp(env), startApp({ ...env, BIDBENCH_UNFAIR_PER_FIELD: '1' })])
      t.after(() => Promise.all([stopApp(honest), stopApp(unfair)]))
      assert.equal(honest.info.unfair_per_field, false)
      assert.equal(unfair.info.unfair_per_field, true)
      assert.equal(unfair.info.unfair_unsorted, false)
      // stderr is its own pipe: the warning, written before the start-up line, may reach us after it.
      for (let i = 0; i < 100 && !/BIDBENCH_UNFAIR_PER_FIELD=1/.test(unfair.logs()); i++) await sleep(20)
      assert.match(unfair.logs(), /BIDBENCH_UNFAIR_PER_FIELD=1: GET \/items\/\{id\} reads each field with its own SELECT\./)
      assert.doesNotMatch(honest.logs(), /BIDBENCH_UNFAIR/)

      const clockless = (response) => response.headerList.map(([name, value]) => [name, name === 'date' || name === 'server-timing' ? '' : value])
      // GETs path on app and returns the response with the names of the statements it sent: every SQL
      // debug line precedes the request's own line, which is written after the response.
      const getWithStatements = async (app, path) => {
        const from = app.logs().length
        const response = await retrying(() => request(app.port, { path }))
        assertWire(response)
        const done = new RegExp(` DEBUG GET ${path} ${response.status} `)
        for (let i = 0; i < 100 && !done.test(app.logs().slice(from)); i++) await sleep(20)
        const lines = app.logs().slice(from).split('\n')
        const last = lines.findLastIndex((line) => done.test(line))
        assert.ok(last >= 0, `debug line for ${path}`)
        // Statements of a 503-retried attempt came before the final attempt's; keep the final ones only.
        const previous = lines.slice(0, last).findLastIndex((line) => / DEBUG GET /.test(line))
        const names = lines.slice(previous + 1, last).flatMap((line) => / DEBUG sql (\S+) /.exec(line)?.slice(1) ?? [])
        return { response, names }
      }
      const perFieldNames = [
        'get_item_field_id', 'get_item_field_category_id', 'get_item_field_seller_id', 'get_item_field_nickname',
        'get_item_field_title', 'get_item_field_description', 'get_item_field_initial_price_cents',
        'get_item_field_max_bid_cents', 'get_item_field_bid_count', 'get_item_field_start_time', 'get_item_field_end_time',
      ]

      const { item_id: busy } = await one(`SELECT item_id FROM bids GROUP BY item_id HAVING count(*) > 5 ORDER BY item_id LIMIT 1`)
      const { id: ended } = await one(`SELECT id FROM items WHERE end_time < now() ORDER BY id LIMIT 1`)
      const title = `caf\u00e9 \u{1F600} "per field" \\ ${unique('t')}`
      const newItem = { seller_id: 1, category_id: 1, title, description: 'line\nbreak', initial_price_cents: 100000000000, duration_seconds: 3600 }
      const created = (await retrying(() => json(honest.port, 'POST', '/items', newItem))).json()
      for (const id of [busy, ended, created.id]) {
        const path = `/items/${id}`
        const a = await getWithStatements(honest, path)
        const b = await getWithStatements(unfair, path)
        assert.equal(a.response.status, 200, path)
        assert.equal(b.response.status, a.response.status, path)
        assert.equal(b.response.body, a.response.body, path)
        assert.deepEqual(clockless(b.response), clockless(a.response), path)
        assert.deepEqual(a.names, ['get_item', 'top_bids'], path)
        assert.deepEqual(b.names, [...perFieldNames, 'top_bids'], path)
      }
      // And the body is the one PostgreSQL builds itself, as in the honest app's test above.
      const expected = await one(
        `SELECT json_build_object('id', i.id, 'category_id', i.category_id, 'seller_id', i.seller_id, 'seller_nickname', u.nickname,
           'title', i.title, 'description', i.description, 'initial_price_cents', i.initial_price_cents,
           'max_bid_cents', i.max_bid_cents, 'bid_count', i.bid_count, 'start_time', ${TS('i.start_time')},
           'end_time', ${TS('i.end_time')}) AS j FROM items i JOIN users u ON u.id = i.seller_id WHERE i.id = $1`,
        [busy],
      )
      const top = await jsonRows(`SELECT ${BID} AS j FROM bids WHERE item_id = $1 ORDER BY amount_cents DESC, id LIMIT 5`, [busy])
      assert.equal((await getWithStatements(unfair, `/items/${busy}`)).response.body, JSON.stringify({ ...expected.j, top_bids: top }))

      // A missing item, never there or deleted: the same 404, after the existence check alone.
      assert.equal((await retrying(() => json(honest.port, 'DELETE', `/items/${created.id}`))).status, 200)
      for (const id of [2147483647, created.id]) {
        const a = await getWithStatements(honest, `/items/${id}`)
        const b = await getWithStatements(unfair, `/items/${id}`)
        assertError(b.response, 404, 'item not found')
        assert.equal(b.response.body, a.response.body)
        assert.deepEqual(clockless(b.response), clockless(a.response))
        assert.deepEqual(a.names, ['get_item'])
        assert.deepEqual(b.names, ['get_item_field_id'])
      }

      // Every other endpoint sends what the honest app sends.
      for (const path of ['/regions', `/items/${busy}/bids`, '/users/1']) {
        const a = await getWithStatements(honest, path)
        const b = await getWithStatements(unfair, path)
        assert.equal(b.response.body, a.response.body, path)
        assert.deepEqual(b.names, a.names, path)
      }
      assert.doesNotMatch(unfair.logs(), /internal error|unhandled/)
    })
  }
}
