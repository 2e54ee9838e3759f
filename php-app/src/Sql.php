<?php

declare(strict_types=1);

namespace Bidbench;

/**
 * Every SQL statement of the app, in one place, with the exact text of contract/queries.sql (the
 * trailing `;` dropped). tests/Unit/SqlContractTest.php compares these texts with that file. The
 * PerField cases are not in queries.sql: they are the deliberately unequal variant
 * BIDBENCH_UNFAIR_PER_FIELD=1, whose texts contract/README.md ("Deliberately unequal variants") lists.
 *
 * The texts keep the contract's `$n` placeholders. PDO binds only `?` (or `:name`) placeholders, so
 * Db rewrites `$n` to `?` and orders the parameters to match; PDO then sends `$1`, `$2`, ... in textual
 * order to the server. Two statements number their parameters out of textual order (update_item,
 * raise_item_max_bid); for those the server sees the same statement with renumbered parameters, exactly
 * as pgjdbc sends it.
 */
enum Sql: string
{
    case Ready = 'ready';
    case ListRegions = 'list_regions';
    case ListCategories = 'list_categories';
    case ListCategoryItems = 'list_category_items';
    case CategoryExists = 'category_exists';
    case GetItem = 'get_item';
    case TopBids = 'top_bids';
    case CreateItem = 'create_item';
    case UpdateItem = 'update_item';
    case DeleteItem = 'delete_item';
    case ListItemBids = 'list_item_bids';
    case ItemExists = 'item_exists';
    case LockItemForBid = 'lock_item_for_bid';
    case InsertBid = 'insert_bid';
    case RaiseItemMaxBid = 'raise_item_max_bid';
    case GetUser = 'get_user';
    case CreateUser = 'create_user';
    case PerFieldId = 'per_field_id';
    case PerFieldCategoryId = 'per_field_category_id';
    case PerFieldSellerId = 'per_field_seller_id';
    case PerFieldNickname = 'per_field_nickname';
    case PerFieldTitle = 'per_field_title';
    case PerFieldDescription = 'per_field_description';
    case PerFieldInitialPriceCents = 'per_field_initial_price_cents';
    case PerFieldMaxBidCents = 'per_field_max_bid_cents';
    case PerFieldBidCount = 'per_field_bid_count';
    case PerFieldStartTime = 'per_field_start_time';
    case PerFieldEndTime = 'per_field_end_time';

    /**
     * get_item read one column at a time, in the order BIDBENCH_UNFAIR_PER_FIELD=1 sends them (RUBiS
     * Revisited §6). The first is the existence check. Each returns the column under the name get_item
     * gives it, so the single values add up to get_item's row.
     */
    public const PER_FIELD = [
        self::PerFieldId,
        self::PerFieldCategoryId,
        self::PerFieldSellerId,
        self::PerFieldNickname,
        self::PerFieldTitle,
        self::PerFieldDescription,
        self::PerFieldInitialPriceCents,
        self::PerFieldMaxBidCents,
        self::PerFieldBidCount,
        self::PerFieldStartTime,
        self::PerFieldEndTime,
    ];

    public function text(): string
    {
        return match ($this) {
            self::Ready => <<<'SQL'
                SELECT 1
                SQL,
            self::ListRegions => <<<'SQL'
                SELECT id, name FROM regions ORDER BY id
                SQL,
            self::ListCategories => <<<'SQL'
                SELECT id, name FROM categories ORDER BY id
                SQL,
            self::ListCategoryItems => <<<'SQL'
                SELECT id, category_id, seller_id, title, initial_price_cents, max_bid_cents, bid_count, start_time, end_time
                  FROM items
                 WHERE category_id = $1::integer AND end_time > now()
                 ORDER BY end_time, id
                 LIMIT $2::integer OFFSET $3::integer
                SQL,
            self::CategoryExists => <<<'SQL'
                SELECT 1 FROM categories WHERE id = $1::integer
                SQL,
            self::GetItem => <<<'SQL'
                SELECT i.id, i.category_id, i.seller_id, u.nickname, i.title, i.description, i.initial_price_cents,
                       i.max_bid_cents, i.bid_count, i.start_time, i.end_time
                  FROM items i JOIN users u ON u.id = i.seller_id
                 WHERE i.id = $1::integer
                SQL,
            self::TopBids => <<<'SQL'
                SELECT id, item_id, bidder_id, amount_cents, created_at
                  FROM bids WHERE item_id = $1::integer
                 ORDER BY amount_cents DESC, id
                 LIMIT 5
                SQL,
            self::CreateItem => <<<'SQL'
                INSERT INTO items (seller_id, category_id, title, description, initial_price_cents, start_time, end_time)
                VALUES ($1::integer, $2::integer, $3::text, $4::text, $5::bigint, now(), now() + $6::integer * interval '1 second')
                RETURNING id, category_id, seller_id, title, description, initial_price_cents, max_bid_cents, bid_count, start_time, end_time
                SQL,
            self::UpdateItem => <<<'SQL'
                UPDATE items SET title = $2::text, description = $3::text
                 WHERE id = $1::integer
                RETURNING id, category_id, seller_id, title, description, initial_price_cents, max_bid_cents, bid_count, start_time, end_time
                SQL,
            self::DeleteItem => <<<'SQL'
                DELETE FROM items WHERE id = $1::integer RETURNING id
                SQL,
            self::ListItemBids => <<<'SQL'
                SELECT id, item_id, bidder_id, amount_cents, created_at
                  FROM bids WHERE item_id = $1::integer
                 ORDER BY amount_cents DESC, id
                 LIMIT $2::integer OFFSET $3::integer
                SQL,
            self::ItemExists => <<<'SQL'
                SELECT 1 FROM items WHERE id = $1::integer
                SQL,
            self::LockItemForBid => <<<'SQL'
                SELECT initial_price_cents, max_bid_cents, end_time > now() AS open
                  FROM items WHERE id = $1::integer
                   FOR UPDATE
                SQL,
            self::InsertBid => <<<'SQL'
                INSERT INTO bids (item_id, bidder_id, amount_cents, created_at)
                VALUES ($1::integer, $2::integer, $3::bigint, now())
                RETURNING id, item_id, bidder_id, amount_cents, created_at
                SQL,
            self::RaiseItemMaxBid => <<<'SQL'
                UPDATE items SET max_bid_cents = $2::bigint, bid_count = bid_count + 1 WHERE id = $1::integer
                SQL,
            self::GetUser => <<<'SQL'
                SELECT id, nickname, region_id, rating, created_at FROM users WHERE id = $1::integer
                SQL,
            self::CreateUser => <<<'SQL'
                INSERT INTO users (nickname, region_id, created_at)
                VALUES ($1::text, $2::integer, now())
                RETURNING id, nickname, region_id, rating, created_at
                SQL,
            self::PerFieldId => <<<'SQL'
                SELECT id FROM items WHERE id = $1::integer
                SQL,
            self::PerFieldCategoryId => <<<'SQL'
                SELECT category_id FROM items WHERE id = $1::integer
                SQL,
            self::PerFieldSellerId => <<<'SQL'
                SELECT seller_id FROM items WHERE id = $1::integer
                SQL,
            self::PerFieldNickname => <<<'SQL'
                SELECT u.nickname FROM items i JOIN users u ON u.id = i.seller_id WHERE i.id = $1::integer
                SQL,
            self::PerFieldTitle => <<<'SQL'
                SELECT title FROM items WHERE id = $1::integer
                SQL,
            self::PerFieldDescription => <<<'SQL'
                SELECT description FROM items WHERE id = $1::integer
                SQL,
            self::PerFieldInitialPriceCents => <<<'SQL'
                SELECT initial_price_cents FROM items WHERE id = $1::integer
                SQL,
            self::PerFieldMaxBidCents => <<<'SQL'
                SELECT max_bid_cents FROM items WHERE id = $1::integer
                SQL,
            self::PerFieldBidCount => <<<'SQL'
                SELECT bid_count FROM items WHERE id = $1::integer
                SQL,
            self::PerFieldStartTime => <<<'SQL'
                SELECT start_time FROM items WHERE id = $1::integer
                SQL,
            self::PerFieldEndTime => <<<'SQL'
                SELECT end_time FROM items WHERE id = $1::integer
                SQL,
        };
    }

    /**
     * The list queries whose ORDER BY the deliberately unequal variant BIDBENCH_UNFAIR_UNSORTED=1 drops
     * (RUBiS Revisited §3). top_bids keeps it: without ORDER BY it would not be "the five highest".
     */
    public function isList(): bool
    {
        return match ($this) {
            self::ListRegions, self::ListCategories, self::ListCategoryItems, self::ListItemBids => true,
            default => false,
        };
    }

    /** The text of the unequal variant: the same statement without its ORDER BY clause. */
    public function unsortedText(): string
    {
        return (string) preg_replace('/\s*ORDER BY [^\n]*?(?=\s*(LIMIT\b|$))/', '', $this->text());
    }
}
