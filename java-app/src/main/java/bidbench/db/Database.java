package bidbench.db;

import bidbench.config.Config;
import bidbench.timing.RequestTiming;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import javax.sql.DataSource;

/** The connection pool that {@code JAVA_POOL} chose, and the one way to borrow from it: {@link #open}. */
public final class Database implements AutoCloseable {

    private final ConnectionPool pool;
    private final DataSource dataSource;
    private final Queries queries;
    private final AvailabilityGate gate = new AvailabilityGate();
    private final CheckoutBudget checkouts;

    private Database(ConnectionPool pool, Queries queries, int poolSize) {
        this.pool = pool;
        this.dataSource = pool.dataSource();
        this.queries = queries;
        this.checkouts = new CheckoutBudget(poolSize, ConnectionPools.CHECKOUT_TIMEOUT_MS);
    }

    public static Database start(Config config) {
        return new Database(ConnectionPools.open(config),
                Queries.of(config.unfairUnsorted(), config.unfairPerField()), config.dbPoolSize());
    }

    public Queries queries() {
        return queries;
    }

    /** Borrows a connection for a request that arrives now (tests, probes); see {@link #open(RequestTiming, long)}. */
    public DbSession open(RequestTiming timing) throws SQLException {
        return open(timing, System.nanoTime());
    }

    /**
     * Borrows a connection; the checkout time counts as database time. Whatever keeps a connection from
     * being had is 503 database unavailable (contract rule 8), with every JAVA_POOL choice alike. The 5 s
     * checkout timeout is counted from the request's arrival, so time spent queued for a Jetty thread
     * counts too (as the time queued for an FPM child does in PHP); while the database is known to be
     * down, the 503 comes at once (see {@link AvailabilityGate}).
     */
    public DbSession open(RequestTiming timing, long arrivedNanos) throws SQLException {
        long mark = timing.mark();
        boolean probe = false;
        boolean permitted = false;
        try {
            probe = gate.enter(pool::canLend);
            permitted = checkouts.acquire(arrivedNanos);
            Connection connection = borrow(arrivedNanos);
            gate.connected();
            DbSession session = new DbSession(connection, timing, gate::observe, checkouts::release);
            permitted = false; // the session gives it back when it closes
            return session;
        } finally {
            if (permitted) {
                checkouts.release();
            }
            gate.leave(probe);
            timing.addDb(mark);
        }
    }

    /**
     * Asks the pool until it hands out a connection, the failure says the database is gone, or the
     * request's checkout budget has no room for another attempt. HikariCP's attempt is short
     * ({@link ConnectionPools#ATTEMPT_TIMEOUT_MS}) and is repeated only while it merely timed out with the
     * database up (a connection being replaced). A refused or lost connection is 503 at once, as in Node's
     * pg.Pool and PHP's PDO, and shuts the gate. The budget bounds the total, so a request that queued
     * for a permit does not add a full pool wait on top (CI's db-outage test saw two 6 s responses).
     */
    private Connection borrow(long arrivedNanos) throws SQLException {
        while (true) {
            try {
                return dataSource.getConnection();
            } catch (SQLException e) {
                gate.observe(e);
                boolean retry = gate.isOpen()
                        && e instanceof SQLTransientConnectionException
                        && checkouts.hasLeft(arrivedNanos, ConnectionPools.ATTEMPT_TIMEOUT_MS);
                if (!retry) {
                    throw SqlErrors.checkoutFailure(e);
                }
            }
        }
    }

    @Override
    public void close() {
        pool.close();
    }
}
