package bidbench.it;

import static bidbench.it.Wire.expect;
import static bidbench.it.Wire.expectError;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import bidbench.App;
import bidbench.db.Queries;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * BIDBENCH_UNFAIR_PER_FIELD=1 next to the honest app on the same database: GET /items/{id} answers the
 * same bytes, and pg_stat_statements shows that the eleven per-field statements did the work instead of
 * get_item. The conformance suite must tell the two apart by their database work alone.
 */
class PerFieldVariantTest {

    /** The per-field statements as the server sees them (pgjdbc sends {@code ?} as {@code $1}), in order. */
    private static final List<String> PER_FIELD = List.of(
            "SELECT id FROM items WHERE id = $1::integer",
            "SELECT category_id FROM items WHERE id = $1::integer",
            "SELECT seller_id FROM items WHERE id = $1::integer",
            "SELECT u.nickname FROM items i JOIN users u ON u.id = i.seller_id WHERE i.id = $1::integer",
            "SELECT title FROM items WHERE id = $1::integer",
            "SELECT description FROM items WHERE id = $1::integer",
            "SELECT initial_price_cents FROM items WHERE id = $1::integer",
            "SELECT max_bid_cents FROM items WHERE id = $1::integer",
            "SELECT bid_count FROM items WHERE id = $1::integer",
            "SELECT start_time FROM items WHERE id = $1::integer",
            "SELECT end_time FROM items WHERE id = $1::integer");

    private static final String GET_ITEM = Queries.GET_ITEM.text().replace("?", "$1");

    private static App perField;
    private static int honestPort;
    private static int perFieldPort;

    @BeforeAll
    static void start() throws Exception {
        honestPort = TestApp.port();
        perField = TestApp.start(TestDatabase.url(), Map.of("BIDBENCH_UNFAIR_PER_FIELD", "1"));
        perFieldPort = perField.port();
    }

    @AfterAll
    static void stop() throws Exception {
        perField.close();
    }

    @Test
    void sameBytesAsTheHonestApp() throws Exception {
        List<Long> items = new ArrayList<>();
        items.add(TestDatabase.scalar(
                "SELECT item_id FROM bids GROUP BY item_id HAVING count(*) > 5 ORDER BY item_id LIMIT 1"));
        items.add(TestDatabase.scalar(
                "SELECT id FROM items i WHERE NOT EXISTS (SELECT 1 FROM bids b WHERE b.item_id = i.id) ORDER BY id LIMIT 1"));
        items.add(TestDatabase.scalar("SELECT id FROM items WHERE end_time < now() ORDER BY id LIMIT 1"));
        JsonNode created = expect(RawHttp.json(honestPort, "POST", "/items", "{\"seller_id\":1,\"category_id\":2,"
                + "\"title\":\"per field \\u00e9 \\ud83d\\ude00\",\"description\":\"\\\"quoted\\\"\\n\","
                + "\"initial_price_cents\":12345,\"duration_seconds\":600}"), 201);
        long createdId = created.get("id").asLong();
        items.add(createdId);
        try {
            for (Long item : items) {
                assertNotNull(item, "the seed has such an item");
                RawHttp.Response honest = RawHttp.get(honestPort, "/items/" + item);
                RawHttp.Response unfair = RawHttp.get(perFieldPort, "/items/" + item);
                expect(honest, 200);
                expect(unfair, 200);
                assertEquals(honest.text(), unfair.text(), "item " + item);
                assertArrayEquals(honest.body(), unfair.body(), "item " + item);
                assertEquals(honest.header("Content-Type"), unfair.header("Content-Type"));
                assertEquals(honest.header("Content-Length"), unfair.header("Content-Length"));
            }
        } finally {
            expect(RawHttp.send(honestPort, RawHttp.request("DELETE", "/items/" + createdId, null, null)), 200);
        }
    }

    @Test
    void elevenStatementsInsteadOfGetItem() throws Exception {
        long item = TestDatabase.scalar("SELECT id FROM items ORDER BY id LIMIT 1");
        List<Long> before = perFieldCalls();
        long getItemBefore = getItemCalls();

        expect(RawHttp.get(perFieldPort, "/items/" + item), 200);
        expect(RawHttp.get(perFieldPort, "/items/" + item), 200);
        assertEquals(plus(before, 2, PER_FIELD.size()), perFieldCalls(), "each per-field statement once per GET");
        assertEquals(getItemBefore, getItemCalls(), "no get_item with the knob on");

        expect(RawHttp.get(honestPort, "/items/" + item), 200);
        assertEquals(plus(before, 2, PER_FIELD.size()), perFieldCalls(), "the honest app sends none of them");
        assertEquals(getItemBefore + 1, getItemCalls(), "the honest app sends get_item");
    }

    @Test
    void missingItemIs404AfterTheExistenceCheckAlone() throws Exception {
        List<Long> before = perFieldCalls();
        RawHttp.Response honest = RawHttp.get(honestPort, "/items/2147483647");
        RawHttp.Response unfair = RawHttp.get(perFieldPort, "/items/2147483647");
        expectError(honest, 404, "not_found", "item not found");
        expectError(unfair, 404, "not_found", "item not found");
        assertArrayEquals(honest.body(), unfair.body());
        assertEquals(plus(before, 1, 1), perFieldCalls(), "only the existence check ran");
    }

    @Test
    void otherEndpointsAreUnchanged() throws Exception {
        long item = TestDatabase.scalar(
                "SELECT item_id FROM bids GROUP BY item_id HAVING count(*) > 5 ORDER BY item_id LIMIT 1");
        for (String target : List.of("/items/" + item + "/bids?limit=3", "/users/1", "/regions", "/items/abc")) {
            RawHttp.Response honest = RawHttp.get(honestPort, target);
            RawHttp.Response unfair = RawHttp.get(perFieldPort, target);
            assertEquals(honest.status(), unfair.status(), target);
            assertArrayEquals(honest.body(), unfair.body(), target);
        }
    }

    /** {@code calls} plus {@code n} for the first {@code count} statements of PER_FIELD. */
    private static List<Long> plus(List<Long> calls, long n, int count) {
        List<Long> out = new ArrayList<>(calls);
        for (int i = 0; i < count; i++) {
            out.set(i, out.get(i) + n);
        }
        return out;
    }

    /** pg_stat_statements' calls of each PER_FIELD statement in this database, 0 when never run. */
    private static List<Long> perFieldCalls() throws Exception {
        List<Long> calls = new ArrayList<>();
        for (String text : PER_FIELD) {
            calls.add(calls(text));
        }
        return calls;
    }

    private static long getItemCalls() throws Exception {
        return calls(GET_ITEM);
    }

    /**
     * One statement's calls, matched on its text without spacing, trailing ';' or '::integer'.
     * pg_stat_statements keeps the text of a statement's first execution, and that may have come from
     * node-postgres (a trailing ';') or from a test's own check without the cast
     * ({@code SELECT bid_count FROM items WHERE id = ?}), which the server counts as the same statement.
     */
    private static long calls(String text) throws Exception {
        return TestDatabase.scalar("SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s"
                + " JOIN pg_database d ON d.oid = s.dbid"
                + " WHERE d.datname = current_database()"
                + " AND btrim(regexp_replace(replace(s.query, '::integer', ''), '\\s+', ' ', 'g'), '; ') = ?",
                normalized(text));
    }

    private static String normalized(String text) {
        return text.replace("::integer", "").replaceAll("\\s+", " ").trim();
    }
}
