package bidbench.json;

import static org.junit.jupiter.api.Assertions.assertEquals;

import bidbench.model.Bid;
import bidbench.model.Category;
import bidbench.model.ItemDetail;
import bidbench.model.ItemRecord;
import bidbench.model.ItemSummary;
import bidbench.model.Paging;
import bidbench.model.Region;
import bidbench.model.User;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Exact bytes: compact JSON, field order of openapi.yaml, integer cents, the one timestamp format. */
class JsonViewsTest {

    private static final Instant START = Instant.parse("2026-11-21T14:21:00.120Z");
    private static final Instant END = Instant.parse("2036-01-01T00:00:00Z");
    private static final Bid BID = new Bid(7, 3, 9, 100_000_000_000L, Instant.parse("2026-11-21T14:22:00.001Z"));

    private static String text(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }

    @Test
    void healthAndReady() {
        assertEquals("{\"status\":\"ok\"}", text(JsonViews.health()));
        assertEquals("{\"status\":\"ready\"}", text(JsonViews.ready()));
    }

    @Test
    void errorBody() {
        assertEquals("{\"error\":{\"code\":\"not_found\",\"message\":\"route not found\"}}",
                text(JsonViews.error("not_found", "route not found")));
    }

    @Test
    void regionsAndCategories() {
        assertEquals("{\"regions\":[{\"id\":1,\"name\":\"Alabama\"},{\"id\":2,\"name\":\"Alaska\"}]}",
                text(JsonViews.regions(List.of(new Region(1, "Alabama"), new Region(2, "Alaska")))));
        assertEquals("{\"categories\":[]}", text(JsonViews.categories(List.of())));
        assertEquals("{\"categories\":[{\"id\":5,\"name\":\"Coins & \\\"Stamps\\\"\"}]}",
                text(JsonViews.categories(List.of(new Category(5, "Coins & \"Stamps\"")))));
    }

    @Test
    void itemPageFieldOrder() {
        ItemSummary item = new ItemSummary(11, 2, 3, "lamp", 2500, 0, 0, START, END);
        assertEquals("{\"items\":[{\"id\":11,\"category_id\":2,\"seller_id\":3,\"title\":\"lamp\","
                + "\"initial_price_cents\":2500,\"max_bid_cents\":0,\"bid_count\":0,"
                + "\"start_time\":\"2026-11-21T14:21:00.120Z\",\"end_time\":\"2036-01-01T00:00:00.000Z\"}],"
                + "\"limit\":20,\"offset\":0}",
                text(JsonViews.itemPage(List.of(item), Paging.DEFAULT)));
    }

    @Test
    void itemRecordFieldOrder() {
        ItemRecord item = new ItemRecord(11, 2, 3, "lamp", "", 2500, 2600, 1, START, END);
        assertEquals("{\"id\":11,\"category_id\":2,\"seller_id\":3,\"title\":\"lamp\",\"description\":\"\","
                + "\"initial_price_cents\":2500,\"max_bid_cents\":2600,\"bid_count\":1,"
                + "\"start_time\":\"2026-11-21T14:21:00.120Z\",\"end_time\":\"2036-01-01T00:00:00.000Z\"}",
                text(JsonViews.itemRecord(item)));
    }

    @Test
    void itemDetailFieldOrderAndTopBids() {
        ItemDetail item = new ItemDetail(11, 2, 3, "seller_3", "lamp", "old", 2500, 100_000_000_000L, 1, START, END,
                List.of(BID));
        assertEquals("{\"id\":11,\"category_id\":2,\"seller_id\":3,\"seller_nickname\":\"seller_3\",\"title\":\"lamp\","
                + "\"description\":\"old\",\"initial_price_cents\":2500,\"max_bid_cents\":100000000000,\"bid_count\":1,"
                + "\"start_time\":\"2026-11-21T14:21:00.120Z\",\"end_time\":\"2036-01-01T00:00:00.000Z\","
                + "\"top_bids\":[{\"id\":7,\"item_id\":3,\"bidder_id\":9,\"amount_cents\":100000000000,"
                + "\"created_at\":\"2026-11-21T14:22:00.001Z\"}]}",
                text(JsonViews.itemDetail(item)));
    }

    @Test
    void bidAndBidPage() {
        String bid = "{\"id\":7,\"item_id\":3,\"bidder_id\":9,\"amount_cents\":100000000000,"
                + "\"created_at\":\"2026-11-21T14:22:00.001Z\"}";
        assertEquals(bid, text(JsonViews.bid(BID)));
        assertEquals("{\"bids\":[" + bid + "],\"limit\":5,\"offset\":10}",
                text(JsonViews.bidPage(List.of(BID), new Paging(5, 10))));
    }

    @Test
    void userAndDeleted() {
        assertEquals("{\"id\":4,\"nickname\":\"bob_4\",\"region_id\":2,\"rating\":-3,"
                + "\"created_at\":\"2026-11-21T14:21:00.120Z\"}",
                text(JsonViews.user(new User(4, "bob_4", 2, -3, START))));
        assertEquals("{\"id\":2147483647,\"deleted\":true}", text(JsonViews.deleted(Integer.MAX_VALUE)));
    }

    @Test
    void nonAsciiIsValidUtf8() {
        byte[] body = JsonViews.regions(List.of(new Region(1, "Zürich \uD83D\uDE00")));
        assertEquals("{\"regions\":[{\"id\":1,\"name\":\"Zürich \uD83D\uDE00\"}]}", text(body));
    }
}
