package bidbench.db;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * Answers 503 at once while the database is known to be down, instead of sending every request to the
 * pool. Without it, during an outage all Jetty threads sit in checkout attempts and new arrivals queue
 * behind them for longer than the contract's 5 s bound, while Node's pool and PHP's PDO are refused at
 * once and answer 503 in milliseconds (found by {@code ./bidbench faults db-outage}).
 *
 * <p>A lost or refused connection shuts the gate. While it is shut, one request at a time (the probe)
 * still goes to the pool for one attempt, if the pool can lend at all ({@link ConnectionPool#canLend}:
 * HikariCP with no idle connection cannot, and its attempt would only wait 500 ms for a certain 503, which
 * made /ready take that long during an outage); the first probe that gets a connection opens the gate
 * again, so the database's return is noticed as soon as the pool has reconnected. A pool that is merely
 * exhausted (the database is up but slow) does not shut it: those requests keep their full 5 s checkout
 * wait, as in the other two apps.
 */
final class AvailabilityGate {

    private final AtomicBoolean down = new AtomicBoolean();
    private final AtomicBoolean probing = new AtomicBoolean();

    /**
     * Lets a request through to the pool. Returns true when it goes as the probe (then it must call
     * {@link #leave}); throws an "unavailable" exception when the gate is shut and a probe is on its way
     * or the pool has nothing to lend.
     */
    boolean enter(BooleanSupplier poolCanLend) throws SQLTransientConnectionException {
        if (!down.get()) {
            return false;
        }
        if (poolCanLend.getAsBoolean() && probing.compareAndSet(false, true)) {
            return true;
        }
        throw new SQLTransientConnectionException("database unavailable (the last connection attempt failed)", "08001");
    }

    void leave(boolean probe) {
        if (probe) {
            probing.set(false);
        }
    }

    boolean isOpen() {
        return !down.get();
    }

    /** A connection was had: the database is back. */
    void connected() {
        down.set(false);
    }

    /** Shuts the gate when the failure says the server is gone or refusing us; other failures are ignored. */
    void observe(SQLException e) {
        if (SqlErrors.isConnectionLost(e)) {
            down.set(true);
        }
    }
}
