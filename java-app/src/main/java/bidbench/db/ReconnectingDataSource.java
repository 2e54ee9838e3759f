package bidbench.db;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * The data source HikariCP makes its connections with. HikariCP connects on one background thread and,
 * after each failed attempt, sleeps twice as long as after the one before, up to 5 s. So after an outage
 * of a few seconds it noticed the database's return only seconds later, with nothing to lend meanwhile
 * (503s and a failing /ready), where Node's pg.Pool and PHP's PDO connect on the next request.
 *
 * <p>Here a refused connect is retried every {@link #RETRY_MS} on HikariCP's thread, so its back-off never
 * grows and the pool has a connection within that time of the database's return. The first refusal of an
 * outage still reaches HikariCP, which keeps it as the cause of its checkout timeouts: that cause is how
 * {@link AvailabilityGate} learns that the database is gone. Only "server gone or not taking us" is
 * retried (SQLSTATE class 08, 57P01-57P03); a rejected password or a missing database fail as before.
 */
final class ReconnectingDataSource extends DelegatingDataSource {

    /** A refused connect on a loopback or LAN costs well under a millisecond: retrying this often is cheap. */
    static final long RETRY_MS = 100;

    private final AtomicBoolean refused = new AtomicBoolean();
    private volatile boolean closed;

    ReconnectingDataSource(DataSource delegate) {
        super(delegate);
    }

    @Override
    public Connection getConnection() throws SQLException {
        while (true) {
            try {
                Connection connection = delegate.getConnection();
                refused.set(false);
                return connection;
            } catch (SQLException e) {
                if (closed || !SqlErrors.isConnectionLost(e) || refused.compareAndSet(false, true)) {
                    throw e;
                }
                try {
                    Thread.sleep(RETRY_MS);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** Ends a retry loop in progress: the pool is closing and its connection adder must stop. */
    void close() {
        closed = true;
    }

    /**
     * Ignored: HikariCP sets its 500 ms checkout attempt here (rounded up to 1 s), and pgjdbc would then
     * give up on a database that accepts and never answers after 1 s with a "connection lost" error, so
     * a silent database would read as a refusing one. pgjdbc's own {@code connectTimeout}, the same for
     * every JAVA_POOL, stays the only bound on a connection attempt.
     */
    @Override
    public void setLoginTimeout(int seconds) {
        // deliberately not passed on
    }
}
