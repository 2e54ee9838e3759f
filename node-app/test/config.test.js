'use strict'

const test = require('node:test')
const assert = require('node:assert/strict')
const { load, maskedDatabaseUrl } = require('../src/config')
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
})

test('every knob is read, bad values fail loudly', () => {
  const config = load({ HOST: '0.0.0.0', PORT: '9000', DB_POOL_SIZE: '32', NODE_WORKERS: '4', PG_NATIVE: '1', LOG_LEVEL: 'debug', SERVER_TIMING: '0', BIDBENCH_UNFAIR_UNSORTED: '1' })
  assert.deepEqual(
    [config.host, config.port, config.dbPoolSize, config.nodeWorkers, config.pgNative, config.logLevel, config.serverTiming, config.unfairUnsorted],
    ['0.0.0.0', 9000, 32, 4, true, 'debug', false, true],
  )
  for (const env of [{ PORT: 'x' }, { PORT: '70000' }, { DB_POOL_SIZE: '0' }, { NODE_WORKERS: '-1' }, { PG_NATIVE: 'yes' }, { LOG_LEVEL: 'trace' }, { SERVER_TIMING: '2' }]) {
    assert.throws(() => load(env), JSON.stringify(env))
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
