'use strict'

// GET /regions.

const format = require('../format')

module.exports = (db) => ({
  list: async (request) => {
    const rows = await db.withSession(request.timer, (session) => session.query(db.sql.list_regions))
    return { status: 200, body: { regions: rows.map(format.region) } }
  },
})
