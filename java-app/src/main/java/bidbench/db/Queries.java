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

    // BIDBENCH_UNFAIR_PER_FIELD=1 reads GET /items/{id}'s item with one SELECT per column of get_item, in
    // get_item's column order, instead of get_item (RUBiS Revisited §6). Deliberately unequal, so not in
    // contract/queries.sql (contract/README.md, "Deliberately unequal variants", lists them). Each answers
    // one column, under get_item's name for it.

    public static final Sql GET_ITEM_FIELD_ID = new Sql("get_item_field_id",
            "SELECT id FROM items WHERE id = ?::integer");
    public static final Sql GET_ITEM_FIELD_CATEGORY_ID = new Sql("get_item_field_category_id",
            "SELECT category_id FROM items WHERE id = ?::integer");
    public static final Sql GET_ITEM_FIELD_SELLER_ID = new Sql("get_item_field_seller_id",
            "SELECT seller_id FROM items WHERE id = ?::integer");
    public static final Sql GET_ITEM_FIELD_NICKNAME = new Sql("get_item_field_nickname",
            "SELECT u.nickname FROM items i JOIN users u ON u.id = i.seller_id WHERE i.id = ?::integer");
    public static final Sql GET_ITEM_FIELD_TITLE = new Sql("get_item_field_title",
            "SELECT title FROM items WHERE id = ?::integer");
    public static final Sql GET_ITEM_FIELD_DESCRIPTION = new Sql("get_item_field_description",
            "SELECT description FROM items WHERE id = ?::integer");
    public static final Sql GET_ITEM_FIELD_INITIAL_PRICE_CENTS = new Sql("get_item_field_initial_price_cents",
            "SELECT initial_price_cents FROM items WHERE id = ?::integer");
    public static final Sql GET_ITEM_FIELD_MAX_BID_CENTS = new Sql("get_item_field_max_bid_cents",
            "SELECT max_bid_cents FROM items WHERE id = ?::integer");
    public static final Sql GET_ITEM_FIELD_BID_COUNT = new Sql("get_item_field_bid_count",
            "SELECT bid_count FROM items WHERE id = ?::integer");
    public static final Sql GET_ITEM_FIELD_START_TIME = new Sql("get_item_field_start_time",
            "SELECT start_time FROM items WHERE id = ?::integer");
    public static final Sql GET_ITEM_FIELD_END_TIME = new Sql("get_item_field_end_time",
            "SELECT end_time FROM items WHERE id = ?::integer");

    private final boolean unsorted;
    private final boolean perField;

    private Queries(boolean unsorted, boolean perField) {
        this.unsorted = unsorted;
        this.perField = perField;
    }

    /**
     * The contract's statements, with the deliberately unequal variants that are on: {@code unsorted}, list
     * queries drop their ORDER BY (RUBiS Revisited §3); {@code perField}, see {@link #itemPerField()}.
     */
    public static Queries of(boolean unsorted, boolean perField) {
        return new Queries(unsorted, perField);
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

    /** True when GET /items/{id} reads the item with the GET_ITEM_FIELD_* statements instead of GET_ITEM. */
    public boolean itemPerField() {
        return perField;
    }
}
