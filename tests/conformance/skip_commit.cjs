'use strict'

// Negative control (issue #31 item 9), preloaded into the node app with NODE_OPTIONS=--require: the
// node-postgres client never sends COMMIT and answers as if it had. The transaction stays open on its
// pooled connection (the next BEGIN only warns) until a later ROLLBACK or the app's exit throws it away:
// less database work, and lost writes. pg_stat_statements counts COMMIT only as a lower bound (pgjdbc's
// are prepared), so this went unseen; the server's statement log must catch it. Not part of the app.

const path = require('node:path')

const pg = require(require.resolve('pg', { paths: [path.join(__dirname, '..', '..', 'node-app')] }))

const query = pg.Client.prototype.query
pg.Client.prototype.query = function skipCommit(config, values, callback) {
  const text = typeof config === 'string' ? config : config && config.text
  if (typeof text === 'string' && text.trim().toUpperCase() === 'COMMIT') {
    return Promise.resolve({ command: 'COMMIT', rowCount: null, rows: [], fields: [] })
  }
  return query.call(this, config, values, callback)
}
process.emitWarning('bidbench negative control: COMMIT is never sent (tests/conformance/skip_commit.cjs)')
