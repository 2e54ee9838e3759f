'use strict'

// Every SQL statement of the app, verbatim from contract/queries.sql (test/queries.test.js fails if they
// drift apart), and below them the deliberately unequal variants, which the contract leaves out. Each runs
// as a named server-side prepared statement: node-postgres (and pg-native) prepares a name once per
// connection and then only binds and executes it.
//
// Transaction control (BEGIN, COMMIT, ROLLBACK) is not prepared; see db/database.js.

const statements = {
  ready: `SELECT 1;`,

  list_regions: `SELECT id, name FROM regions ORDER BY id;`,

  list_categories: `SELECT id, name FROM categories ORDER BY id;`,

  list_category_items: `SELECT id, category_id, seller_id, title, initial_price_cents, max_bid_cents, bid_count, start_time, end_time
  FROM items
 WHERE category_id = $1::integer AND end_time > now()
 ORDER BY end_time, id
 LIMIT $2::integer OFFSET $3::integer;`,

  category_exists: `SELECT 1 FROM categories WHERE id = $1::integer;`,

  get_item: `SELECT i.id, i.category_id, i.seller_id, u.nickname, i.title, i.description, i.initial_price_cents,
       i.max_bid_cents, i.bid_count, i.start_time, i.end_time
  FROM items i JOIN users u ON u.id = i.seller_id
 WHERE i.id = $1::integer;`,

  top_bids: `SELECT id, item_id, bidder_id, amount_cents, created_at
  FROM bids WHERE item_id = $1::integer
 ORDER BY amount_cents DESC, id
 LIMIT 5;`,

  create_item: `INSERT INTO items (seller_id, category_id, title, description, initial_price_cents, start_time, end_time)
VALUES ($1::integer, $2::integer, $3::text, $4::text, $5::bigint, now(), now() + $6::integer * interval '1 second')
RETURNING id, category_id, seller_id, title, description, initial_price_cents, max_bid_cents, bid_count, start_time, end_time;`,

  update_item: `UPDATE items SET title = $2::text, description = $3::text
 WHERE id = $1::integer
RETURNING id, category_id, seller_id, title, description, initial_price_cents, max_bid_cents, bid_count, start_time, end_time;`,

  delete_item: `DELETE FROM items WHERE id = $1::integer RETURNING id;`,

  list_item_bids: `SELECT id, item_id, bidder_id, amount_cents, created_at
  FROM bids WHERE item_id = $1::integer
 ORDER BY amount_cents DESC, id
 LIMIT $2::integer OFFSET $3::integer;`,

  item_exists: `SELECT 1 FROM items WHERE id = $1::integer;`,

  lock_item_for_bid: `SELECT initial_price_cents, max_bid_cents, end_time > now() AS open
  FROM items WHERE id = $1::integer
   FOR UPDATE;`,

  insert_bid: `INSERT INTO bids (item_id, bidder_id, amount_cents, created_at)
VALUES ($1::integer, $2::integer, $3::bigint, now())
RETURNING id, item_id, bidder_id, amount_cents, created_at;`,

  raise_item_max_bid: `UPDATE items SET max_bid_cents = $2::bigint, bid_count = bid_count + 1 WHERE id = $1::integer;`,

  get_user: `SELECT id, nickname, region_id, rating, created_at FROM users WHERE id = $1::integer;`,

  create_user: `INSERT INTO users (nickname, region_id, created_at)
VALUES ($1::text, $2::integer, now())
RETURNING id, nickname, region_id, rating, created_at;`,
}

// The list queries that BIDBENCH_UNFAIR_UNSORTED=1 runs without their ORDER BY (RUBiS Revisited §3): the
// deliberately unequal variant the conformance suite must catch. They get their own statement names,
// because a prepared statement's name is bound to its text.
const UNSORTED = ['list_regions', 'list_categories', 'list_category_items', 'list_item_bids']

function withoutOrderBy(text) {
  return text.replace(/\n? ?ORDER BY [^\n;]*?(?=;|\n)/, '')
}

// What BIDBENCH_UNFAIR_PER_FIELD=1 sends for GET /items/{id} instead of get_item (RUBiS Revisited §6): one
// SELECT per column, in this order, each answering with the one column that get_item's row carries under
// the same key. Another deliberately unequal variant, so it is not in contract/queries.sql and not in
// `statements`; the names are its own because a prepared statement's name is bound to its text.
const PER_FIELD = Object.freeze(
  [
    ['id', `SELECT id FROM items WHERE id = $1::integer;`],
    ['category_id', `SELECT category_id FROM items WHERE id = $1::integer;`],
    ['seller_id', `SELECT seller_id FROM items WHERE id = $1::integer;`],
    ['nickname', `SELECT u.nickname FROM items i JOIN users u ON u.id = i.seller_id WHERE i.id = $1::integer;`],
    ['title', `SELECT title FROM items WHERE id = $1::integer;`],
    ['description', `SELECT description FROM items WHERE id = $1::integer;`],
    ['initial_price_cents', `SELECT initial_price_cents FROM items WHERE id = $1::integer;`],
    ['max_bid_cents', `SELECT max_bid_cents FROM items WHERE id = $1::integer;`],
    ['bid_count', `SELECT bid_count FROM items WHERE id = $1::integer;`],
    ['start_time', `SELECT start_time FROM items WHERE id = $1::integer;`],
    ['end_time', `SELECT end_time FROM items WHERE id = $1::integer;`],
  ].map(([column, text]) => Object.freeze({ name: `get_item_field_${column}`, text, column })),
)

// name -> { name, text }, ready to become node-postgres query configs. With perField, get_item_per_field
// holds the PER_FIELD list as well; the handler's choice between the two is whether it is there.
function build({ unsorted = false, perField = false } = {}) {
  const out = {}
  for (const [name, text] of Object.entries(statements)) {
    out[name] =
      unsorted && UNSORTED.includes(name)
        ? Object.freeze({ name: `${name}_unsorted`, text: withoutOrderBy(text) })
        : Object.freeze({ name, text })
  }
  if (perField) out.get_item_per_field = PER_FIELD
  return Object.freeze(out)
}

module.exports = { statements, build, UNSORTED, PER_FIELD }
