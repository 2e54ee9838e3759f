package bidbench.it;

import static bidbench.it.Wire.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import bidbench.App;
import bidbench.config.JavaPool;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The app with each JAVA_POOL choice: reads, autocommit writes and bid transactions, with four times more
 * concurrent requests than connections, so that borrowers wait for each other (the unpooled driver for a
 * permit, the pools for a returned connection) and a connection that ran a transaction is handed on in
 * autocommit mode.
 */
class PoolVariantsTest {

    @ParameterizedTest
    @EnumSource(JavaPool.class)
    void servesTheContractWithFewerConnectionsThanRequests(JavaPool pool) throws Exception {
        App app = TestApp.start(TestDatabase.url(), Map.of("DB_POOL_SIZE", "2", "JAVA_POOL", pool.value()));
        try {
            int port = app.port();
            expect(RawHttp.get(port, "/ready"), 200);
            expect(RawHttp.get(port, "/users/1"), 200);
            JsonNode item = expect(RawHttp.json(port, "POST", "/items", "{\"seller_id\":1,\"category_id\":1,"
                    + "\"title\":\"pool " + pool.value() + "\",\"description\":\"\",\"initial_price_cents\":1,"
                    + "\"duration_seconds\":600}"), 201);
            long itemId = item.get("id").asLong();
            ExecutorService clients = Executors.newFixedThreadPool(8);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    boolean bid = i % 2 == 0;
                    results.add(clients.submit(() -> bid
                            ? RawHttp.json(port, "POST", "/items/" + itemId + "/bids", "{\"bidder_id\":"
                                    + ThreadLocalRandom.current().nextInt(1, 100) + ",\"amount_cents\":"
                                    + ThreadLocalRandom.current().nextLong(1, 10_000) + "}").status()
                            : RawHttp.get(port, "/items/" + itemId).status()));
                }
                int accepted = 0;
                for (Future<Integer> result : results) {
                    int status = result.get();
                    assertTrue(status == 200 || status == 201 || status == 409, "status " + status);
                    accepted += status == 201 ? 1 : 0;
                }
                assertTrue(accepted >= 1);
                JsonNode detail = expect(RawHttp.get(port, "/items/" + itemId), 200);
                assertEquals(accepted, detail.get("bid_count").asInt());
                assertEquals(TestDatabase.scalar("SELECT count(*) FROM bids WHERE item_id = ?", (int) itemId),
                        detail.get("bid_count").asLong());
                assertEquals(TestDatabase.scalar("SELECT max(amount_cents) FROM bids WHERE item_id = ?", (int) itemId),
                        detail.get("max_bid_cents").asLong());
            } finally {
                clients.shutdownNow();
            }
            // Every connection has run a bid transaction by now; an autocommit delete must still commit.
            expect(RawHttp.send(port, RawHttp.request("DELETE", "/items/" + itemId, null, null)), 200);
            assertEquals(0L, TestDatabase.scalar("SELECT count(*) FROM items WHERE id = ?", (int) itemId));
        } finally {
            app.close();
        }
    }
}
