package bidbench.db;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import bidbench.config.Config;
import bidbench.config.JavaPool;
import bidbench.it.TestDatabase;
import bidbench.timing.RequestTiming;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A request's checkout is a series of short pool attempts inside its 5 s budget (counted from its
 * arrival): a refused database is 503 after one attempt, and a pool that cannot connect but has no
 * error to show (the server accepts and never answers) is 503 when the budget runs out, not one full
 * pool wait after the request got its permit.
 */
class CheckoutAttemptsTest {

    private static final long BUDGET_MS = ConnectionPools.CHECKOUT_TIMEOUT_MS;

    private static Database hikariAt(String url) {
        return Database.start(Config.fromEnv(Map.of("DATABASE_URL", url, "PORT", "0", "DB_POOL_SIZE", "2",
                "JAVA_POOL", JavaPool.HIKARI.value())));
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    @Test
    void aRefusedDatabaseIs503AfterOneAttemptNotTheWholeBudget() throws Exception {
        try (Database database = hikariAt(TestDatabase.unreachableUrl())) {
            long started = System.nanoTime();
            SQLException refused = assertThrows(SQLException.class, () -> database.open(RequestTiming.start(false)));
            long tookMs = millisSince(started);
            assertTrue(SqlErrors.isUnavailable(refused) && SqlErrors.isConnectionLost(refused), refused.toString());
            assertTrue(tookMs < BUDGET_MS / 2, "refused after " + tookMs + " ms: the request waited out its budget");
        }
    }

    @Test
    void aSilentDatabaseIs503WhenTheRequestsBudgetRunsOut() throws Exception {
        // Accepts connections (the kernel completes the handshake) and never answers: no connect error to
        // report, so the attempts go on as long as the budget allows.
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                Database database = hikariAt(TestDatabase.urlAt(silent.getLocalPort()))) {
            long queuedMs = 3_000;
            long arrived = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(queuedMs);
            long started = System.nanoTime();
            SQLException timeout = assertThrows(SQLException.class,
                    () -> database.open(RequestTiming.start(false), arrived));
            long tookMs = millisSince(started);
            assertTrue(SqlErrors.isUnavailable(timeout), timeout.toString());
            assertTrue(!SqlErrors.isConnectionLost(timeout), "nothing refused us: " + timeout);
            long leftMs = BUDGET_MS - queuedMs;
            assertTrue(tookMs >= leftMs - ConnectionPools.ATTEMPT_TIMEOUT_MS,
                    "gave up after " + tookMs + " ms with " + leftMs + " ms of budget left");
            assertTrue(tookMs < leftMs + ConnectionPools.ATTEMPT_TIMEOUT_MS * 2,
                    "waited " + tookMs + " ms with only " + leftMs + " ms of budget left");
        }
    }
}
