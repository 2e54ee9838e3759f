package bidbench.db;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import bidbench.config.Config;
import bidbench.config.JavaPool;
import bidbench.it.TestDatabase;
import bidbench.timing.RequestTiming;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/** The gate that turns "the database is down" into an immediate 503 instead of a pool attempt per request. */
class AvailabilityGateTest {

    private static final BooleanSupplier CAN_LEND = () -> true;

    private final AvailabilityGate gate = new AvailabilityGate();

    private static SQLException refused() {
        return new SQLTransientConnectionException("timeout", null,
                new PSQLException("Connection to 127.0.0.1:1 refused", PSQLState.CONNECTION_UNABLE_TO_CONNECT));
    }

    @Test
    void openUntilAConnectionIsLost() throws Exception {
        assertFalse(gate.enter(CAN_LEND), "an open gate makes no probe");
        gate.observe(new SQLTransientConnectionException("pool exhausted, database up"));
        assertTrue(gate.isOpen(), "an exhausted pool keeps its 5 s wait");
        gate.observe(new PSQLException("duplicate key", PSQLState.UNIQUE_VIOLATION));
        assertTrue(gate.isOpen(), "a query error says nothing about the server");
        gate.observe(refused());
        assertFalse(gate.isOpen());
    }

    @Test
    void whileShutOneProbeGoesThroughAndTheRestGet503AtOnce() throws Exception {
        gate.observe(new SQLException("terminating connection due to administrator command", "57P01"));
        assertTrue(gate.enter(CAN_LEND), "the first request after the failure is the probe");
        SQLException fast = assertThrows(SQLException.class, () -> gate.enter(CAN_LEND));
        assertTrue(SqlErrors.isUnavailable(fast), "the others are 503 database unavailable: " + fast);
        gate.leave(true);
        assertTrue(gate.enter(CAN_LEND), "after the probe came back, the next one may probe");
        gate.leave(true);
    }

    @Test
    void whileShutAPoolWithNothingToLendGetsNoProbe() throws Exception {
        gate.observe(refused());
        SQLException fast = assertThrows(SQLException.class, () -> gate.enter(() -> false));
        assertTrue(SqlErrors.isUnavailable(fast), "503 at once, no pool attempt: " + fast);
        assertTrue(gate.enter(CAN_LEND), "once the pool has a connection, a probe goes to it");
        gate.leave(true);
    }

    @Test
    void aProbeThatConnectsOpensTheGate() throws Exception {
        gate.observe(refused());
        assertTrue(gate.enter(CAN_LEND));
        gate.connected();
        gate.leave(true);
        assertTrue(gate.isOpen(), "the database is back: everyone goes to the pool again");
        assertFalse(gate.enter(CAN_LEND));
    }

    @Test
    void withTheDatabaseDownOnlyOneRequestWaitsForThePool() throws Exception {
        String nowhere = TestDatabase.unreachableUrl();
        Config config = Config.fromEnv(Map.of("DATABASE_URL", nowhere, "PORT", "0", "DB_POOL_SIZE", "2",
                "JAVA_POOL", JavaPool.HIKARI.value()));
        try (Database database = Database.start(config)) {
            // The first request learns it from one pool attempt (HikariCP's timeout, cause: connection refused).
            long started = System.nanoTime();
            SQLException first = assertThrows(SQLException.class, () -> database.open(RequestTiming.start(false)));
            long tookMs = (System.nanoTime() - started) / 1_000_000;
            assertTrue(SqlErrors.isUnavailable(first), first.toString());
            assertTrue(tookMs < ConnectionPools.CHECKOUT_TIMEOUT_MS / 2, "refused after " + tookMs + " ms");
            ExecutorService pool = Executors.newFixedThreadPool(20);
            try {
                List<Future<String>> answers = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    answers.add(pool.submit(() -> {
                        try (DbSession ignored = database.open(RequestTiming.start(false))) {
                            return "connected";
                        } catch (SQLException e) {
                            return SqlErrors.isUnavailable(e) ? e.getMessage() : "not 503: " + e;
                        }
                    }));
                }
                int atOnce = 0;
                for (Future<String> answer : answers) {
                    String message = answer.get();
                    assertFalse(message.startsWith("not 503") || message.equals("connected"), message);
                    if (message.contains("the last connection attempt failed")) {
                        atOnce++;
                    }
                }
                assertTrue(atOnce >= 19, "all but the probe are answered by the gate: " + atOnce + " of 20");
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
