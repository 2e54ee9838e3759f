package bidbench.api;

import bidbench.db.Database;
import bidbench.db.DbSession;
import bidbench.db.Queries;
import bidbench.db.Rows;
import bidbench.db.Sql;
import bidbench.db.SqlErrors;
import bidbench.http.Errors;
import bidbench.http.Reply;
import bidbench.json.JsonViews;
import bidbench.model.Bid;
import bidbench.model.ItemDetail;
import bidbench.model.ItemRecord;
import bidbench.model.ItemSummary;
import bidbench.model.Paging;
import bidbench.validation.Body;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;

/** The item endpoints: a category's open items, item detail, create, update, delete. */
final class ItemEndpoints {

    private final Database database;

    ItemEndpoints(Database database) {
        this.database = database;
    }

    /** GET /categories/{id}/items: the existence check runs only when the page is empty. */
    Reply listCategoryItems(Call call) throws SQLException {
        Paging paging = call.paging();
        List<ItemSummary> items;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            items = db.list(database.queries().listCategoryItems(), statement -> {
                statement.setInt(1, call.id());
                statement.setInt(2, paging.limit());
                statement.setInt(3, paging.offset());
            }, Rows::itemSummary);
            if (items.isEmpty() && !db.exists(Queries.CATEGORY_EXISTS, statement -> statement.setInt(1, call.id()))) {
                throw Errors.notFound("category not found");
            }
        }
        return Reply.ok(JsonViews.itemPage(items, paging));
    }

    /** GET /items/{id}: top_bids runs only when get_item (or its per-field variant) found the item. */
    Reply get(Call call) throws SQLException {
        ItemDetail item;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            item = database.queries().itemPerField()
                    ? itemPerField(db, call.id())
                    : db.one(Queries.GET_ITEM, statement -> statement.setInt(1, call.id()), Rows::itemDetail);
            if (item == null) {
                throw Errors.notFound("item not found");
            }
            List<Bid> topBids = db.list(Queries.TOP_BIDS, statement -> statement.setInt(1, call.id()), Rows::bid);
            item = item.withTopBids(topBids);
        }
        return Reply.ok(JsonViews.itemDetail(item));
    }

    /**
     * BIDBENCH_UNFAIR_PER_FIELD=1: get_item's row from one statement per column, in get_item's column order,
     * so the response is byte for byte get_item's and only the database work differs. The first statement
     * is the existence check; an item deleted between two statements is a 404 too, never half a row.
     */
    private static ItemDetail itemPerField(DbSession db, int id) throws SQLException {
        int itemId = field(db, Queries.GET_ITEM_FIELD_ID, id, row -> row.getInt("id"));
        int categoryId = field(db, Queries.GET_ITEM_FIELD_CATEGORY_ID, id, row -> row.getInt("category_id"));
        int sellerId = field(db, Queries.GET_ITEM_FIELD_SELLER_ID, id, row -> row.getInt("seller_id"));
        String nickname = field(db, Queries.GET_ITEM_FIELD_NICKNAME, id, row -> row.getString("nickname"));
        String title = field(db, Queries.GET_ITEM_FIELD_TITLE, id, row -> row.getString("title"));
        String description = field(db, Queries.GET_ITEM_FIELD_DESCRIPTION, id, row -> row.getString("description"));
        long initialPriceCents = field(db, Queries.GET_ITEM_FIELD_INITIAL_PRICE_CENTS, id,
                row -> row.getLong("initial_price_cents"));
        long maxBidCents = field(db, Queries.GET_ITEM_FIELD_MAX_BID_CENTS, id, row -> row.getLong("max_bid_cents"));
        int bidCount = field(db, Queries.GET_ITEM_FIELD_BID_COUNT, id, row -> row.getInt("bid_count"));
        Instant startTime = field(db, Queries.GET_ITEM_FIELD_START_TIME, id, row -> Rows.instant(row, "start_time"));
        Instant endTime = field(db, Queries.GET_ITEM_FIELD_END_TIME, id, row -> Rows.instant(row, "end_time"));
        return new ItemDetail(itemId, categoryId, sellerId, nickname, title, description, initialPriceCents,
                maxBidCents, bidCount, startTime, endTime, List.of());
    }

    /** The one column of a GET_ITEM_FIELD_* statement; no row means the item is gone (every column is NOT NULL). */
    private static <T> T field(DbSession db, Sql sql, int id, DbSession.RowMapper<T> column) throws SQLException {
        T value = db.one(sql, statement -> statement.setInt(1, id), column);
        if (value == null) {
            throw Errors.notFound("item not found");
        }
        return value;
    }

    /** POST /items. */
    Reply create(Call call) throws SQLException {
        Body body = call.body();
        ItemRecord item;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            item = db.one(Queries.CREATE_ITEM, statement -> {
                statement.setInt(1, body.integer("seller_id"));
                statement.setInt(2, body.integer("category_id"));
                statement.setString(3, body.text("title"));
                statement.setString(4, body.text("description"));
                statement.setLong(5, body.cents("initial_price_cents"));
                statement.setInt(6, body.integer("duration_seconds"));
            }, Rows::itemRecord);
        } catch (SQLException e) {
            if (SqlErrors.is(e, SqlErrors.FOREIGN_KEY_VIOLATION)) {
                throw Errors.notFound("seller or category not found");
            }
            throw e;
        }
        return Reply.created(JsonViews.itemRecord(item));
    }

    /** PUT /items/{id}. */
    Reply update(Call call) throws SQLException {
        Body body = call.body();
        ItemRecord item;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            item = db.one(Queries.UPDATE_ITEM, statement -> {
                statement.setString(1, body.text("title"));
                statement.setString(2, body.text("description"));
                statement.setInt(3, call.id());
            }, Rows::itemRecord);
        }
        if (item == null) {
            throw Errors.notFound("item not found");
        }
        return Reply.ok(JsonViews.itemRecord(item));
    }

    /** DELETE /items/{id}: the item's bids go by ON DELETE CASCADE. */
    Reply delete(Call call) throws SQLException {
        Integer id;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            id = db.one(Queries.DELETE_ITEM, statement -> statement.setInt(1, call.id()), Rows::id);
        }
        if (id == null) {
            throw Errors.notFound("item not found");
        }
        return Reply.ok(JsonViews.deleted(id));
    }
}
