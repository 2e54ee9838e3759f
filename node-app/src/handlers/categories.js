'use strict'

// GET /categories and GET /categories/{id}/items.

const format = require('../format')
const { errors } = require('../http/errors')

module.exports = (db) => ({
  list: async (request) => {
    const rows = await db.withSession(request.timer, (session) => session.query(db.sql.list_categories))
    return { status: 200, body: { categories: rows.map(format.category) } }
  },

  // An empty page is a 200 for an existing category; only then is category_exists asked, so a full page
  // costs one statement, as in every app.
  listItems: async (request) => {
    const { id, limit, offset } = request
    const rows = await db.withSession(request.timer, async (session) => {
      const page = await session.query(db.sql.list_category_items, [id, limit, offset])
      if (page.length === 0 && (await session.query(db.sql.category_exists, [id])).length === 0) {
        throw errors.categoryNotFound
      }
      return page
    })
    return { status: 200, body: format.itemPage(rows, limit, offset) }
  },
})
