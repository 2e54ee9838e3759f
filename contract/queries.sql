-- The exact database work of every request type (docs/design.md §3.2). All three apps issue these statements,
-- with these texts up to placeholder syntax ($1 in Java/Node/PDO-pgsql alike), with every parameter bound
-- server-side (see contract/README.md, "Prepared statements"), in this order, and nothing else.
-- Every parameter carries an explicit cast so that every driver (pgjdbc typed binds, node-postgres text
-- binds, PDO text binds) resolves the same types.
-- The conformance suite compares pg_stat_statements calls and rows per request type across the apps.

-- name: ready                      -- GET /ready
SELECT 1;

-- name: list_regions               -- GET /regions
SELECT id, name FROM regions ORDER BY id;

-- name: list_categories            -- GET /categories
SELECT id, name FROM categories ORDER BY id;

-- name: list_category_items        -- GET /categories/{id}/items   ($1 id, $2 limit, $3 offset)
SELECT id, category_id, seller_id, title, initial_price_cents, max_bid_cents, bid_count, start_time, end_time
  FROM items
 WHERE category_id = $1::integer AND end_time > now()
 ORDER BY end_time, id
 LIMIT $2::integer OFFSET $3::integer;

-- name: category_exists            -- only when list_category_items returned no rows; no row -> 404
SELECT 1 FROM categories WHERE id = $1::integer;

-- name: get_item                   -- GET /items/{id}; no row -> 404 (and top_bids is not run)
SELECT i.id, i.category_id, i.seller_id, u.nickname, i.title, i.description, i.initial_price_cents,
       i.max_bid_cents, i.bid_count, i.start_time, i.end_time
  FROM items i JOIN users u ON u.id = i.seller_id
 WHERE i.id = $1::integer;

-- name: top_bids                   -- GET /items/{id}, after get_item found the item
SELECT id, item_id, bidder_id, amount_cents, created_at
  FROM bids WHERE item_id = $1::integer
 ORDER BY amount_cents DESC, id
 LIMIT 5;

-- name: create_item                -- POST /items; SQLSTATE 23503 -> 404 "seller or category not found"
INSERT INTO items (seller_id, category_id, title, description, initial_price_cents, start_time, end_time)
VALUES ($1::integer, $2::integer, $3::text, $4::text, $5::bigint, now(), now() + $6::integer * interval '1 second')
RETURNING id, category_id, seller_id, title, description, initial_price_cents, max_bid_cents, bid_count, start_time, end_time;

-- name: update_item                -- PUT /items/{id}; no row -> 404
UPDATE items SET title = $2::text, description = $3::text
 WHERE id = $1::integer
RETURNING id, category_id, seller_id, title, description, initial_price_cents, max_bid_cents, bid_count, start_time, end_time;

-- name: delete_item                -- DELETE /items/{id}; bids go by ON DELETE CASCADE; no row -> 404
DELETE FROM items WHERE id = $1::integer RETURNING id;

-- name: list_item_bids             -- GET /items/{id}/bids   ($1 id, $2 limit, $3 offset)
SELECT id, item_id, bidder_id, amount_cents, created_at
  FROM bids WHERE item_id = $1::integer
 ORDER BY amount_cents DESC, id
 LIMIT $2::integer OFFSET $3::integer;

-- name: item_exists                -- only when list_item_bids returned no rows; no row -> 404
SELECT 1 FROM items WHERE id = $1::integer;

-- POST /items/{id}/bids is one READ COMMITTED transaction:
--   BEGIN
--   lock_item_for_bid     no row -> ROLLBACK, 404 "item not found"
--                         open = false -> ROLLBACK, 409 "auction has ended"
--                         amount < max(initial_price_cents, max_bid_cents + 1) -> ROLLBACK,
--                                      409 "bid must be at least <that minimum> cents"
--   insert_bid            SQLSTATE 23503 -> ROLLBACK, 404 "bidder not found"
--   raise_item_max_bid
--   COMMIT
-- The row lock taken by lock_item_for_bid serializes concurrent bids on one item, so there are no
-- lost updates: max_bid_cents = max(bids.amount_cents) and bid_count = count(bids) always hold.

-- name: lock_item_for_bid
SELECT initial_price_cents, max_bid_cents, end_time > now() AS open
  FROM items WHERE id = $1::integer
   FOR UPDATE;

-- name: insert_bid
INSERT INTO bids (item_id, bidder_id, amount_cents, created_at)
VALUES ($1::integer, $2::integer, $3::bigint, now())
RETURNING id, item_id, bidder_id, amount_cents, created_at;

-- name: raise_item_max_bid
UPDATE items SET max_bid_cents = $2::bigint, bid_count = bid_count + 1 WHERE id = $1::integer;

-- name: get_user                   -- GET /users/{id}; no row -> 404
SELECT id, nickname, region_id, rating, created_at FROM users WHERE id = $1::integer;

-- name: create_user                -- POST /users; 23505 -> 409 "nickname already taken"; 23503 -> 404 "region not found"
INSERT INTO users (nickname, region_id, created_at)
VALUES ($1::text, $2::integer, now())
RETURNING id, nickname, region_id, rating, created_at;
