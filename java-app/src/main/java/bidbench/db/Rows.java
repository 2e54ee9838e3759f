package bidbench.db;

import bidbench.model.Bid;
import bidbench.model.BidTarget;
import bidbench.model.Category;
import bidbench.model.ItemDetail;
import bidbench.model.ItemRecord;
import bidbench.model.ItemSummary;
import bidbench.model.Region;
import bidbench.model.User;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;

/** Result rows to records, by the column names of {@link Queries}. */
public final class Rows {

    private Rows() {}

    public static Region region(ResultSet row) throws SQLException {
        return new Region(row.getInt("id"), row.getString("name"));
    }

    public static Category category(ResultSet row) throws SQLException {
        return new Category(row.getInt("id"), row.getString("name"));
    }

    public static ItemSummary itemSummary(ResultSet row) throws SQLException {
        return new ItemSummary(
                row.getInt("id"),
                row.getInt("category_id"),
                row.getInt("seller_id"),
                row.getString("title"),
                row.getLong("initial_price_cents"),
                row.getLong("max_bid_cents"),
                row.getInt("bid_count"),
                instant(row, "start_time"),
                instant(row, "end_time"));
    }

    public static ItemRecord itemRecord(ResultSet row) throws SQLException {
        return new ItemRecord(
                row.getInt("id"),
                row.getInt("category_id"),
                row.getInt("seller_id"),
                row.getString("title"),
                row.getString("description"),
                row.getLong("initial_price_cents"),
                row.getLong("max_bid_cents"),
                row.getInt("bid_count"),
                instant(row, "start_time"),
                instant(row, "end_time"));
    }

    /** get_item; the top bids come from a second statement. */
    public static ItemDetail itemDetail(ResultSet row) throws SQLException {
        return new ItemDetail(
                row.getInt("id"),
                row.getInt("category_id"),
                row.getInt("seller_id"),
                row.getString("nickname"),
                row.getString("title"),
                row.getString("description"),
                row.getLong("initial_price_cents"),
                row.getLong("max_bid_cents"),
                row.getInt("bid_count"),
                instant(row, "start_time"),
                instant(row, "end_time"),
                List.of());
    }

    public static Bid bid(ResultSet row) throws SQLException {
        return new Bid(
                row.getInt("id"),
                row.getInt("item_id"),
                row.getInt("bidder_id"),
                row.getLong("amount_cents"),
                instant(row, "created_at"));
    }

    public static BidTarget bidTarget(ResultSet row) throws SQLException {
        return new BidTarget(row.getLong("initial_price_cents"), row.getLong("max_bid_cents"), row.getBoolean("open"));
    }

    public static User user(ResultSet row) throws SQLException {
        return new User(
                row.getInt("id"),
                row.getString("nickname"),
                row.getInt("region_id"),
                row.getInt("rating"),
                instant(row, "created_at"));
    }

    public static int id(ResultSet row) throws SQLException {
        return row.getInt("id");
    }

    /** timestamptz as an Instant, so formatting never depends on the session or JVM time zone. */
    public static Instant instant(ResultSet row, String column) throws SQLException {
        return row.getObject(column, OffsetDateTime.class).toInstant();
    }
}
