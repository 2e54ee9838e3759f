'use strict'

// The Server-Timing header (contract/README.md, Wire rules): `db` is the wall time spent in database
// calls, pool checkout included (summed by db/database.js); `app` is the wall time from the start of
// handling to the response being written. Both in milliseconds with exactly three decimals.

const { performance } = require('node:perf_hooks')

function serverTiming(dbMs, startMs) {
  return `db;dur=${dbMs.toFixed(3)}, app;dur=${(performance.now() - startMs).toFixed(3)}`
}

module.exports = { serverTiming }
