package bidbench.it;

import static bidbench.it.Wire.expect;
import static bidbench.it.Wire.expectError;
import static bidbench.it.Wire.fields;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every endpoint against the seeded database, compared with what the database itself says. */
class ApiIntegrationTest {

    private static final List<String> ITEM_SUMMARY = List.of("id", "category_id", "seller_id", "title",
            "initial_price_cents", "max_bid_cents", "bid_count", "start_time", "end_time");
    private static final List<String> ITEM_RECORD = List.of("id", "category_id", "seller_id", "title", "description",
            "initial_price_cents", "max_bid_cents", "bid_count", "start_time", "end_time");
    private static final List<String> ITEM_DETAIL = List.of("id", "category_id", "seller_id", "seller_nickname", "title",
            "description", "initial_price_cents", "max_bid_cents", "bid_count", "start_time", "end_time", "top_bids");
    private static final List<String> BID = List.of("id", "item_id", "bidder_id", "amount_cents", "created_at");
    private static final List<String> USER = List.of("id", "nickname", "region_id", "rating", "created_at");

    private static int port;

    @BeforeAll
    static void start() throws Exception {
        port = TestApp.port();
    }

    private static List<Long> ids(String sql, Object... parameters) throws Exception {
        List<Long> ids = new ArrayList<>();
        try (Connection connection = TestDatabase.connect(); PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                statement.setObject(i + 1, parameters[i]);
            }
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    ids.add(rows.getLong(1));
                }
            }
        }
        return ids;
    }

    private static List<Long> ids(JsonNode array) {
        List<Long> ids = new ArrayList<>();
        array.forEach(node -> ids.add(node.get("id").asLong()));
        return ids;
    }

    private static String unique(String prefix) {
        return prefix + Long.toString(System.nanoTime() % 1_000_000_000_000L, 36);
    }

    @Test
    void healthAndReady() throws Exception {
        assertEquals("{\"status\":\"ok\"}", RawHttp.get(port, "/health").text());
        RawHttp.Response ready = RawHttp.get(port, "/ready");
        expect(ready, 200);
        assertEquals("{\"status\":\"ready\"}", ready.text());
    }

    @Test
    void regionsAndCategoriesInIdOrder() throws Exception {
        JsonNode regions = expect(RawHttp.get(port, "/regions"), 200);
        assertEquals(List.of("regions"), fields(regions));
        assertEquals(ids("SELECT id FROM regions ORDER BY id"), ids(regions.get("regions")));
        assertEquals(List.of("id", "name"), fields(regions.get("regions").get(0)));

        JsonNode categories = expect(RawHttp.get(port, "/categories"), 200);
        assertEquals(ids("SELECT id FROM categories ORDER BY id"), ids(categories.get("categories")));
        assertEquals(List.of("id", "name"), fields(categories.get("categories").get(0)));
    }

    @Test
    void categoryItemsArePagedOpenItems() throws Exception {
        long category = TestDatabase.scalar(
                "SELECT category_id FROM items WHERE end_time > now() GROUP BY category_id ORDER BY count(*) DESC LIMIT 1");
        String open = "SELECT id FROM items WHERE category_id = ? AND end_time > now() ORDER BY end_time, id LIMIT ? OFFSET ?";

        JsonNode page = expect(RawHttp.get(port, "/categories/" + category + "/items"), 200);
        assertEquals(List.of("items", "limit", "offset"), fields(page));
        assertEquals(20, page.get("limit").asInt());
        assertEquals(0, page.get("offset").asInt());
        assertEquals(ids(open, (int) category, 20, 0), ids(page.get("items")));
        JsonNode first = page.get("items").get(0);
        assertEquals(ITEM_SUMMARY, fields(first));
        assertTrue(first.get("start_time").asText().matches(Wire.TIMESTAMP));
        assertTrue(Instant.parse(first.get("end_time").asText()).isAfter(Instant.now()));

        page = expect(RawHttp.get(port, "/categories/" + category + "/items?offset=3&limit=7&ignored=x"), 200);
        assertEquals(ids(open, (int) category, 7, 3), ids(page.get("items")));

        page = expect(RawHttp.get(port, "/categories/" + category + "/items?offset=10000&limit=100"), 200);
        assertEquals(0, page.get("items").size());
        assertEquals(100, page.get("limit").asInt());

        expectError(RawHttp.get(port, "/categories/2147483647/items"), 404, "not_found", "category not found");
    }

    @Test
    void itemDetailWithTopFiveBids() throws Exception {
        long item = TestDatabase.scalar("SELECT item_id FROM bids GROUP BY item_id HAVING count(*) > 5 ORDER BY item_id LIMIT 1");
        JsonNode detail = expect(RawHttp.get(port, "/items/" + item), 200);
        assertEquals(ITEM_DETAIL, fields(detail));
        assertEquals(item, detail.get("id").asLong());
        assertEquals(5, detail.get("top_bids").size());
        assertEquals(BID, fields(detail.get("top_bids").get(0)));
        assertEquals(ids("SELECT id FROM bids WHERE item_id = ? ORDER BY amount_cents DESC, id LIMIT 5", (int) item),
                ids(detail.get("top_bids")));
        long seller = detail.get("seller_id").asLong();
        assertEquals(TestDatabase.text("SELECT nickname FROM users WHERE id = ?", (int) seller),
                detail.get("seller_nickname").asText());
        assertEquals(TestDatabase.scalar("SELECT max_bid_cents FROM items WHERE id = ?", (int) item),
                detail.get("max_bid_cents").asLong());
        assertEquals(detail.get("top_bids").get(0).get("amount_cents").asLong(), detail.get("max_bid_cents").asLong());

        expectError(RawHttp.get(port, "/items/2147483647"), 404, "not_found", "item not found");
    }

    @Test
    void itemBidsPaged() throws Exception {
        long item = TestDatabase.scalar("SELECT item_id FROM bids GROUP BY item_id HAVING count(*) > 8 ORDER BY item_id LIMIT 1");
        String bids = "SELECT id FROM bids WHERE item_id = ? ORDER BY amount_cents DESC, id LIMIT ? OFFSET ?";
        JsonNode page = expect(RawHttp.get(port, "/items/" + item + "/bids?limit=3&offset=2"), 200);
        assertEquals(List.of("bids", "limit", "offset"), fields(page));
        assertEquals(ids(bids, (int) item, 3, 2), ids(page.get("bids")));
        assertEquals(BID, fields(page.get("bids").get(0)));

        Long quiet = TestDatabase.scalar(
                "SELECT id FROM items i WHERE NOT EXISTS (SELECT 1 FROM bids b WHERE b.item_id = i.id) ORDER BY id LIMIT 1");
        assertNotNull(quiet, "the seed has items without bids");
        JsonNode empty = expect(RawHttp.get(port, "/items/" + quiet + "/bids"), 200);
        assertEquals("{\"bids\":[],\"limit\":20,\"offset\":0}", new String(RawHttp.get(port, "/items/" + quiet + "/bids").body()));
        assertEquals(0, empty.get("bids").size());

        expectError(RawHttp.get(port, "/items/2147483647/bids"), 404, "not_found", "item not found");
    }

    @Test
    void getUser() throws Exception {
        JsonNode user = expect(RawHttp.get(port, "/users/1"), 200);
        assertEquals(USER, fields(user));
        assertEquals(1, user.get("id").asInt());
        assertTrue(user.get("created_at").asText().matches(Wire.TIMESTAMP));
        expectError(RawHttp.get(port, "/users/2147483647"), 404, "not_found", "user not found");
    }

    @Test
    void usersItemsAndBidsLifecycle() throws Exception {
        String nickname = unique("it_");
        JsonNode user = expect(RawHttp.json(port, "POST", "/users", "{\"nickname\":\"" + nickname + "\",\"region_id\":2}"), 201);
        assertEquals(USER, fields(user));
        assertEquals(nickname, user.get("nickname").asText());
        assertEquals(0, user.get("rating").asInt());
        Instant created = Instant.parse(user.get("created_at").asText());
        assertTrue(Duration.between(created, Instant.now()).abs().toMinutes() < 5, "created_at is now, in UTC");
        long userId = user.get("id").asLong();
        expectError(RawHttp.json(port, "POST", "/users", "{\"nickname\":\"" + nickname + "\",\"region_id\":2}"),
                409, "conflict", "nickname already taken");
        expectError(RawHttp.json(port, "POST", "/users", "{\"nickname\":\"" + unique("it_") + "\",\"region_id\":99999}"),
                404, "not_found", "region not found");

        String create = "{\"seller_id\":" + userId + ",\"category_id\":3,\"title\":\"Zürich \\ud83d\\ude00 lamp\","
                + "\"description\":\"\",\"initial_price_cents\":1000,\"duration_seconds\":3600.0}";
        JsonNode item = expect(RawHttp.json(port, "POST", "/items", create), 201);
        assertEquals(ITEM_RECORD, fields(item));
        assertEquals("Zürich \uD83D\uDE00 lamp", item.get("title").asText());
        assertEquals(0, item.get("max_bid_cents").asLong());
        assertEquals(0, item.get("bid_count").asInt());
        assertEquals(Duration.ofHours(1), Duration.between(Instant.parse(item.get("start_time").asText()),
                Instant.parse(item.get("end_time").asText())));
        long itemId = item.get("id").asLong();
        expectError(RawHttp.json(port, "POST", "/items", create.replace("\"category_id\":3", "\"category_id\":99999")),
                404, "not_found", "seller or category not found");

        JsonNode updated = expect(RawHttp.json(port, "PUT", "/items/" + itemId,
                "{\"title\":\"new title\",\"description\":\"now described\"}"), 200);
        assertEquals(ITEM_RECORD, fields(updated));
        assertEquals("new title", updated.get("title").asText());
        assertEquals("now described", updated.get("description").asText());
        expectError(RawHttp.json(port, "PUT", "/items/2147483647", "{\"title\":\"t\",\"description\":\"\"}"),
                404, "not_found", "item not found");

        String bids = "/items/" + itemId + "/bids";
        expectError(RawHttp.json(port, "POST", bids, "{\"bidder_id\":1,\"amount_cents\":999}"),
                409, "conflict", "bid must be at least 1000 cents");
        JsonNode bid = expect(RawHttp.json(port, "POST", bids, "{\"bidder_id\":1,\"amount_cents\":1000}"), 201);
        assertEquals(BID, fields(bid));
        assertEquals(itemId, bid.get("item_id").asLong());
        assertEquals(1000, bid.get("amount_cents").asLong());
        expectError(RawHttp.json(port, "POST", bids, "{\"bidder_id\":1,\"amount_cents\":1000}"),
                409, "conflict", "bid must be at least 1001 cents");
        expectError(RawHttp.json(port, "POST", bids, "{\"bidder_id\":2147483647,\"amount_cents\":5000}"),
                404, "not_found", "bidder not found");
        expectError(RawHttp.json(port, "POST", "/items/2147483647/bids", "{\"bidder_id\":1,\"amount_cents\":5000}"),
                404, "not_found", "item not found");
        expect(RawHttp.json(port, "POST", bids, "{\"bidder_id\":2,\"amount_cents\":1e5}"), 201);

        JsonNode detail = expect(RawHttp.get(port, "/items/" + itemId), 200);
        assertEquals(100_000, detail.get("max_bid_cents").asLong());
        assertEquals(2, detail.get("bid_count").asInt());
        assertEquals(nickname, detail.get("seller_nickname").asText());
        assertEquals(List.of(100_000L, 1000L), List.of(detail.get("top_bids").get(0).get("amount_cents").asLong(),
                detail.get("top_bids").get(1).get("amount_cents").asLong()));

        RawHttp.Response deleted = RawHttp.send(port, RawHttp.request("DELETE", "/items/" + itemId, null, null));
        expect(deleted, 200);
        assertEquals("{\"id\":" + itemId + ",\"deleted\":true}", deleted.text());
        assertEquals(0L, TestDatabase.scalar("SELECT count(*) FROM bids WHERE item_id = ?", (int) itemId), "cascade");
        expectError(RawHttp.send(port, RawHttp.request("DELETE", "/items/" + itemId, null, null)),
                404, "not_found", "item not found");
    }

    @Test
    void endedAuctionIsAConflict() throws Exception {
        long ended = TestDatabase.scalar("SELECT id FROM items WHERE end_time < now() ORDER BY id LIMIT 1");
        expectError(RawHttp.json(port, "POST", "/items/" + ended + "/bids", "{\"bidder_id\":1,\"amount_cents\":100000000000}"),
                409, "conflict", "auction has ended");
    }

    /** Concurrent bids on one item: no lost update, whatever the interleaving. */
    @Test
    void concurrentBidsKeepTheInvariants() throws Exception {
        JsonNode item = expect(RawHttp.json(port, "POST", "/items", "{\"seller_id\":1,\"category_id\":1,\"title\":\"race\","
                + "\"description\":\"\",\"initial_price_cents\":1,\"duration_seconds\":600}"), 201);
        long itemId = item.get("id").asLong();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int i = 0; i < 80; i++) {
                results.add(pool.submit(() -> {
                    long amount = ThreadLocalRandom.current().nextLong(1, 10_000);
                    RawHttp.Response response = RawHttp.json(port, "POST", "/items/" + itemId + "/bids",
                            "{\"bidder_id\":" + ThreadLocalRandom.current().nextInt(1, 100) + ",\"amount_cents\":" + amount + "}");
                    return response.status();
                }));
            }
            int accepted = 0;
            for (Future<Integer> result : results) {
                int status = result.get();
                assertTrue(status == 201 || status == 409, "status " + status);
                accepted += status == 201 ? 1 : 0;
            }
            assertTrue(accepted >= 1);
            assertEquals((long) accepted, TestDatabase.scalar("SELECT count(*) FROM bids WHERE item_id = ?", (int) itemId));
            assertEquals(TestDatabase.scalar("SELECT count(*) FROM bids WHERE item_id = ?", (int) itemId),
                    TestDatabase.scalar("SELECT bid_count FROM items WHERE id = ?", (int) itemId));
            assertEquals(TestDatabase.scalar("SELECT max(amount_cents) FROM bids WHERE item_id = ?", (int) itemId),
                    TestDatabase.scalar("SELECT max_bid_cents FROM items WHERE id = ?", (int) itemId));
        } finally {
            pool.shutdownNow();
        }
        expect(RawHttp.send(port, RawHttp.request("DELETE", "/items/" + itemId, null, null)), 200);
    }
}
