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
import bidbench.model.BidTarget;
import bidbench.model.Paging;
import java.sql.SQLException;
import java.util.List;

/** An item's bids: list them, and place one. */
final class BidEndpoints {

    private final Database database;

    BidEndpoints(Database database) {
        this.database = database;
    }

    /** GET /items/{id}/bids: the existence check runs only when the page is empty. */
    Reply list(Call call) throws SQLException {
        Paging paging = call.paging();
        List<Bid> bids;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            bids = db.list(database.queries().listItemBids(), statement -> {
                statement.setInt(1, call.id());
                statement.setInt(2, paging.limit());
                statement.setInt(3, paging.offset());
            }, Rows::bid);
            if (bids.isEmpty() && !db.exists(Queries.ITEM_EXISTS, statement -> statement.setInt(1, call.id()))) {
                throw Errors.notFound("item not found");
            }
        }
        return Reply.ok(JsonViews.bidPage(bids, paging));
    }

    /**
     * POST /items/{id}/bids, one READ COMMITTED transaction. The row lock of lock_item_for_bid
     * serializes concurrent bids on one item, so max_bid_cents and bid_count never lose an update.
     * Every refusal rolls back explicitly, so the statement sequence matches queries.sql.
     */
    Reply place(Call call) throws SQLException {
        int itemId = call.id();
        int bidderId = call.body().integer("bidder_id");
        long amount = call.body().cents("amount_cents");
        Bid bid;
        try (DbSession db = database.open(call.timing(), call.arrivedNanos())) {
            db.begin();
            BidTarget item = db.one(Queries.LOCK_ITEM_FOR_BID, statement -> statement.setInt(1, itemId), Rows::bidTarget);
            if (item == null) {
                db.rollback();
                throw Errors.notFound("item not found");
            }
            if (!item.open()) {
                db.rollback();
                throw Errors.conflict("auction has ended");
            }
            long minimum = item.minimumBidCents();
            if (amount < minimum) {
                db.rollback();
                throw Errors.conflict("bid must be at least " + minimum + " cents");
            }
            try {
                bid = db.one(Queries.INSERT_BID, statement -> {
                    statement.setInt(1, itemId);
                    statement.setInt(2, bidderId);
                    statement.setLong(3, amount);
                }, Rows::bid);
            } catch (SQLException e) {
                if (SqlErrors.is(e, SqlErrors.FOREIGN_KEY_VIOLATION)) {
                    db.rollback();
                    throw Errors.notFound("bidder not found");
                }
                throw e;
            }
            db.update(Queries.RAISE_ITEM_MAX_BID, statement -> {
                statement.setLong(1, amount);
                statement.setInt(2, itemId);
            });
            db.commit();
        }
        return Reply.created(JsonViews.bid(bid));
    }
}
