'use strict'

const test = require('node:test')
const assert = require('node:assert/strict')
const { load, maskedDatabaseUrl, ConfigError } = require('../src/config')
const { startupInfo } = require('../src/startup')

test('defaults of contract/README.md', () => {
  const config = load({ DATABASE_URL: 'postgresql://u:p@h:5/d' })
  assert.equal(config.host, '127.0.0.1')
  assert.equal(config.port, 8080)
  assert.equal(config.dbPoolSize, 10)
  assert.equal(config.nodeWorkers, 0)
  assert.equal(config.pgNative, false)
  assert.equal(config.logLevel, 'info')
  assert.equal(config.serverTiming, true)
  assert.equal(config.unfairUnsorted, false)
  assert.equal(config.unfairPerField, false)
})

test('every knob is read, bad values fail loudly', () => {
  const config = load({ HOST: '0.0.0.0', PORT: '9000', DB_POOL_SIZE: '32', NODE_WORKERS: '4', PG_NATIVE: '1', LOG_LEVEL: 'debug', SERVER_TIMING: '0', BIDBENCH_UNFAIR_UNSORTED: '1', BIDBENCH_UNFAIR_PER_FIELD: '1' })
  assert.deepEqual(
    [config.host, config.port, config.dbPoolSize, config.nodeWorkers, config.pgNative, config.logLevel, config.serverTiming, config.unfairUnsorted, config.unfairPerField],
    ['0.0.0.0', 9000, 32, 4, true, 'debug', false, true, true],
  )
  for (const env of [{ PORT: 'x' }, { PORT: '70000' }, { DB_POOL_SIZE: '0' }, { NODE_WORKERS: '-1' }, { PG_NATIVE: 'yes' }, { LOG_LEVEL: 'trace' }, { SERVER_TIMING: '2' }, { BIDBENCH_UNFAIR_UNSORTED: '2' }, { BIDBENCH_UNFAIR_PER_FIELD: '2' }]) {
    assert.throws(() => load(env), JSON.stringify(env))
  }
})

test('BIDBENCH_UNFAIR_PER_FIELD: off by default, 1 turns it on, a bad value is refused like BIDBENCH_UNFAIR_UNSORTED', () => {
  assert.equal(load({}).unfairPerField, false)
  assert.equal(load({ BIDBENCH_UNFAIR_PER_FIELD: '' }).unfairPerField, false)
  assert.equal(load({ BIDBENCH_UNFAIR_PER_FIELD: '0' }).unfairPerField, false)
  assert.equal(load({ BIDBENCH_UNFAIR_PER_FIELD: '1' }).unfairPerField, true)
  // The two knobs are independent.
  assert.deepEqual(
    [load({ BIDBENCH_UNFAIR_PER_FIELD: '1' }).unfairUnsorted, load({ BIDBENCH_UNFAIR_UNSORTED: '1' }).unfairPerField],
    [false, false],
  )
  for (const bad of ['2', 'yes', 'on', '-1', '01x']) {
    const refusal = (name) => {
      try {
        load({ [name]: bad })
      } catch (err) {
        assert.ok(err instanceof ConfigError, `${name}=${bad}: ${err}`)
        assert.ok(err.message.startsWith(`${name} `), err.message)
        return err.message.slice(name.length)
      }
      assert.fail(`${name}=${JSON.stringify(bad)} was accepted`)
    }
    assert.equal(refusal('BIDBENCH_UNFAIR_PER_FIELD'), refusal('BIDBENCH_UNFAIR_UNSORTED'), bad)
  }
})

test('the start-up line states unfair_per_field right after unfair_unsorted', () => {
  for (const [env, expected] of [[{}, false], [{ BIDBENCH_UNFAIR_PER_FIELD: '1' }, true]]) {
    const info = startupInfo(load(env), 8080)
    const keys = Object.keys(info)
    assert.equal(keys[keys.indexOf('unfair_unsorted') + 1], 'unfair_per_field')
    assert.equal(info.unfair_per_field, expected)
  }
})

test('the password never shows', () => {
  assert.equal(maskedDatabaseUrl({ DATABASE_URL: 'postgresql://bidbench:s3cret@127.0.0.1:5432/bidbench' }), 'postgresql://bidbench:***@127.0.0.1:5432/bidbench')
  assert.equal(maskedDatabaseUrl({ DATABASE_URL: 'postgresql://bidbench@127.0.0.1:5432/bidbench' }), 'postgresql://bidbench@127.0.0.1:5432/bidbench')
  assert.equal(maskedDatabaseUrl({ PGUSER: 'u', PGPASSWORD: 'pw', PGHOST: 'db', PGPORT: '6543', PGDATABASE: 'x' }), 'postgresql://u:***@db:6543/x')
  assert.doesNotMatch(maskedDatabaseUrl({ DATABASE_URL: 'host=/tmp password=pw dbname=x' }), /pw/)
  const info = startupInfo(load({ DATABASE_URL: 'postgresql://a:topsecret@h:1/d', NODE_WORKERS: '3', DB_POOL_SIZE: '7' }), 8080)
  assert.doesNotMatch(JSON.stringify(info), /topsecret/)
  assert.equal(info.impl, 'node')
  assert.equal(info.node_workers, 3)
  assert.equal(info.db_connections_max, 21)
  assert.equal(info.node_version, process.version)
  for (const key of ['impl', 'host', 'port', 'db', 'db_pool_size', 'log_level', 'server_timing', 'node_workers', 'pg_native', 'node_version']) {
    assert.ok(key in info, key)
  }
})
