'use strict'

// POST /items, GET /items/{id}, PUT /items/{id}, DELETE /items/{id}.

const format = require('../format')
const { errors } = require('../http/errors')

const FOREIGN_KEY_VIOLATION = '23503'

// BIDBENCH_UNFAIR_PER_FIELD=1: get_item's row, assembled from one SELECT per column (db/queries.js,
// PER_FIELD). The first statement is the existence check; an item deleted between two statements is
// answered as if it had never been found, never as a half-filled row. undefined when there is no item.
async function readItemPerField(session, statements, id) {
  const item = {}
  for (const statement of statements) {
    const rows = await session.query(statement, [id])
    if (rows.length === 0) return undefined
    item[statement.column] = rows[0][statement.column]
  }
  return item
}

module.exports = (db) => ({
  create: async (request) => {
    const b = request.body
    const values = [b.seller_id, b.category_id, b.title, b.description, b.initial_price_cents, b.duration_seconds]
    const rows = await db.withSession(request.timer, async (session) => {
      try {
        return await session.query(db.sql.create_item, values)
      } catch (err) {
        if (err.code === FOREIGN_KEY_VIOLATION) throw errors.sellerOrCategoryNotFound
        throw err
      }
    })
    return { status: 201, body: format.itemRecord(rows[0]) }
  },

  // top_bids runs only once get_item found the item.
  get: async (request) => {
    const perField = db.sql.get_item_per_field
    const body = await db.withSession(request.timer, async (session) => {
      const item = perField
        ? await readItemPerField(session, perField, request.id)
        : (await session.query(db.sql.get_item, [request.id]))[0]
      if (item === undefined) throw errors.itemNotFound
      const bids = await session.query(db.sql.top_bids, [request.id])
      return format.itemDetail(item, bids)
    })
    return { status: 200, body }
  },

  update: async (request) => {
    const { title, description } = request.body
    const rows = await db.withSession(request.timer, (session) =>
      session.query(db.sql.update_item, [request.id, title, description]),
    )
    if (rows.length === 0) throw errors.itemNotFound
    return { status: 200, body: format.itemRecord(rows[0]) }
  },

  remove: async (request) => {
    const rows = await db.withSession(request.timer, (session) => session.query(db.sql.delete_item, [request.id]))
    if (rows.length === 0) throw errors.itemNotFound
    return { status: 200, body: format.deleted(rows[0].id) }
  },
})
