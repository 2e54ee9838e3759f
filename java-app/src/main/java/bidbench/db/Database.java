package bidbench.db;

import bidbench.config.Config;
import bidbench.timing.RequestTiming;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** The connection pool that {@code JAVA_POOL} chose, and the one way to borrow from it: {@link #open}. */
public final class Database implements AutoCloseable {

    private final ConnectionPool pool;
    private final DataSource dataSource;
    private final Queries queries;
    private final AvailabilityGate gate = new AvailabilityGate();

    private Database(ConnectionPool pool, Queries queries) {
        this.pool = pool;
        this.dataSource = pool.dataSource();
        this.queries = queries;
    }

    public static Database start(Config config) {
        return new Database(ConnectionPools.open(config), config.unfairUnsorted() ? Queries.unsorted() : Queries.contract());
    }

    public Queries queries() {
        return queries;
    }

    /**
     * Borrows a connection; the checkout time counts as database time. Whatever keeps a connection from
     * being had is 503 database unavailable (contract rule 8), with every JAVA_POOL choice alike; while the
     * database is known to be down, that 503 comes at once (see {@link AvailabilityGate}).
     */
    public DbSession open(RequestTiming timing) throws SQLException {
        long mark = timing.mark();
        boolean probe = false;
        try {
            probe = gate.enter();
            Connection connection;
            try {
                connection = dataSource.getConnection();
            } catch (SQLException e) {
                gate.observe(e);
                throw SqlErrors.checkoutFailure(e);
            }
            gate.connected();
            return new DbSession(connection, timing, gate::observe);
        } finally {
            gate.leave(probe);
            timing.addDb(mark);
        }
    }

    @Override
    public void close() {
        pool.close();
    }
}
