package bidbench.api;

import bidbench.db.Database;
import bidbench.db.DbSession;
import bidbench.db.Queries;
import bidbench.db.Rows;
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

    /** GET /items/{id}: top_bids runs only when get_item found the item. */
    Reply get(Call call) throws SQLException {
        ItemDetail item;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            item = db.one(Queries.GET_ITEM, statement -> statement.setInt(1, call.id()), Rows::itemDetail);
            if (item == null) {
                throw Errors.notFound("item not found");
            }
            List<Bid> topBids = db.list(Queries.TOP_BIDS, statement -> statement.setInt(1, call.id()), Rows::bid);
            item = item.withTopBids(topBids);
        }
        return Reply.ok(JsonViews.itemDetail(item));
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
