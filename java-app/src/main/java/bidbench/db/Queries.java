package bidbench.db;

/**
 * Every SQL statement the app runs, copied from contract/queries.sql with JDBC {@code ?} placeholders.
 * The casts stay, so that every driver of every app resolves the same parameter types.
 *
 * <p>Bind order follows the {@code ?} order in each text. Two statements number their parameters out
 * of textual order in queries.sql; here they bind in textual order: update_item binds title,
 * description, id, and raise_item_max_bid binds max_bid_cents, id.
 */
public final class Queries {

    public static final Sql READY = new Sql("ready", "SELECT 1");

    public static final Sql CATEGORY_EXISTS = new Sql("category_exists",
            "SELECT 1 FROM categories WHERE id = ?::integer");

    public static final Sql GET_ITEM = new Sql("get_item", """
            SELECT i.id, i.category_id, i.seller_id, u.nickname, i.title, i.description, i.initial_price_cents,
                   i.max_bid_cents, i.bid_count, i.start_time, i.end_time
              FROM items i JOIN users u ON u.id = i.seller_id
             WHERE i.id = ?::integer""");

    public static final Sql TOP_BIDS = new Sql("top_bids", """
            SELECT id, item_id, bidder_id, amount_cents, created_at
              FROM bids WHERE item_id = ?::integer
             ORDER BY amount_cents DESC, id
             LIMIT 5""");

    public static final Sql CREATE_ITEM = new Sql("create_item", """
            INSERT INTO items (seller_id, category_id, title, description, initial_price_cents, start_time, end_time)
            VALUES (?::integer, ?::integer, ?::text, ?::text, ?::bigint, now(), now() + ?::integer * interval '1 second')
            RETURNING id, category_id, seller_id, title, description, initial_price_cents, max_bid_cents, bid_count, start_time, end_time""");

    public static final Sql UPDATE_ITEM = new Sql("update_item", """
            UPDATE items SET title = ?::text, description = ?::text
             WHERE id = ?::integer
            RETURNING id, category_id, seller_id, title, description, initial_price_cents, max_bid_cents, bid_count, start_time, end_time""");

    public static final Sql DELETE_ITEM = new Sql("delete_item",
            "DELETE FROM items WHERE id = ?::integer RETURNING id");

    public static final Sql ITEM_EXISTS = new Sql("item_exists",
            "SELECT 1 FROM items WHERE id = ?::integer");

    public static final Sql LOCK_ITEM_FOR_BID = new Sql("lock_item_for_bid", """
            SELECT initial_price_cents, max_bid_cents, end_time > now() AS open
              FROM items WHERE id = ?::integer
               FOR UPDATE""");

    public static final Sql INSERT_BID = new Sql("insert_bid", """
            INSERT INTO bids (item_id, bidder_id, amount_cents, created_at)
            VALUES (?::integer, ?::integer, ?::bigint, now())
            RETURNING id, item_id, bidder_id, amount_cents, created_at""");

    public static final Sql RAISE_ITEM_MAX_BID = new Sql("raise_item_max_bid",
            "UPDATE items SET max_bid_cents = ?::bigint, bid_count = bid_count + 1 WHERE id = ?::integer");

    public static final Sql GET_USER = new Sql("get_user",
            "SELECT id, nickname, region_id, rating, created_at FROM users WHERE id = ?::integer");

    public static final Sql CREATE_USER = new Sql("create_user", """
            INSERT INTO users (nickname, region_id, created_at)
            VALUES (?::text, ?::integer, now())
            RETURNING id, nickname, region_id, rating, created_at""");

    // The list queries come in two variants: the contract's, and the deliberately unequal one without
    // ORDER BY (BIDBENCH_UNFAIR_UNSORTED=1) that the conformance suite must catch.

    private static final Sql LIST_REGIONS = new Sql("list_regions",
            "SELECT id, name FROM regions ORDER BY id");
    private static final Sql LIST_REGIONS_UNSORTED = new Sql("list_regions",
            "SELECT id, name FROM regions");

    private static final Sql LIST_CATEGORIES = new Sql("list_categories",
            "SELECT id, name FROM categories ORDER BY id");
    private static final Sql LIST_CATEGORIES_UNSORTED = new Sql("list_categories",
            "SELECT id, name FROM categories");

    private static final Sql LIST_CATEGORY_ITEMS = new Sql("list_category_items", """
            SELECT id, category_id, seller_id, title, initial_price_cents, max_bid_cents, bid_count, start_time, end_time
              FROM items
             WHERE category_id = ?::integer AND end_time > now()
             ORDER BY end_time, id
             LIMIT ?::integer OFFSET ?::integer""");
    private static final Sql LIST_CATEGORY_ITEMS_UNSORTED = new Sql("list_category_items", """
            SELECT id, category_id, seller_id, title, initial_price_cents, max_bid_cents, bid_count, start_time, end_time
              FROM items
             WHERE category_id = ?::integer AND end_time > now()
             LIMIT ?::integer OFFSET ?::integer""");

    private static final Sql LIST_ITEM_BIDS = new Sql("list_item_bids", """
            SELECT id, item_id, bidder_id, amount_cents, created_at
              FROM bids WHERE item_id = ?::integer
             ORDER BY amount_cents DESC, id
             LIMIT ?::integer OFFSET ?::integer""");
    private static final Sql LIST_ITEM_BIDS_UNSORTED = new Sql("list_item_bids", """
            SELECT id, item_id, bidder_id, amount_cents, created_at
              FROM bids WHERE item_id = ?::integer
             LIMIT ?::integer OFFSET ?::integer""");

    private final boolean unsorted;

    private Queries(boolean unsorted) {
        this.unsorted = unsorted;
    }

    public static Queries contract() {
        return new Queries(false);
    }

    /** The unequal variant: list queries drop their ORDER BY (RUBiS Revisited §3). */
    public static Queries unsorted() {
        return new Queries(true);
    }

    public Sql listRegions() {
        return unsorted ? LIST_REGIONS_UNSORTED : LIST_REGIONS;
    }

    public Sql listCategories() {
        return unsorted ? LIST_CATEGORIES_UNSORTED : LIST_CATEGORIES;
    }

    public Sql listCategoryItems() {
        return unsorted ? LIST_CATEGORY_ITEMS_UNSORTED : LIST_CATEGORY_ITEMS;
    }

    public Sql listItemBids() {
        return unsorted ? LIST_ITEM_BIDS_UNSORTED : LIST_ITEM_BIDS;
    }
}
