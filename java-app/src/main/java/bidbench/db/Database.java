package bidbench.db;

import bidbench.config.Config;
import bidbench.timing.RequestTiming;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;

/** The HikariCP pool, and the one way to borrow from it: {@link #open}. */
public final class Database implements AutoCloseable {

    /** The contract's pool checkout timeout: after it a request gets 503 database unavailable. */
    public static final long CHECKOUT_TIMEOUT_MS = 5_000;

    private final HikariDataSource pool;
    private final Queries queries;

    private Database(HikariDataSource pool, Queries queries) {
        this.pool = pool;
        this.queries = queries;
    }

    public static Database start(Config config) {
        HikariConfig hikari = new HikariConfig();
        hikari.setPoolName("bidbench");
        hikari.setDriverClassName("org.postgresql.Driver");
        hikari.setJdbcUrl(config.db().jdbcUrl());
        hikari.setUsername(config.db().user());
        hikari.setPassword(config.db().password());
        // A fixed pool (SPEC §3.3: knobs explicit): DB_POOL_SIZE connections, opened at start.
        hikari.setMaximumPoolSize(config.dbPoolSize());
        hikari.setMinimumIdle(config.dbPoolSize());
        hikari.setConnectionTimeout(CHECKOUT_TIMEOUT_MS);
        // Start even when the database is down: /health answers, /ready says 503, and the pool keeps
        // trying in the background, so the app recovers without a restart.
        hikari.setInitializationFailTimeout(-1);
        hikari.setAutoCommit(true);
        hikari.addDataSourceProperty("ApplicationName", "bidbench-java");
        // Bound a connection attempt to a host that does not answer; seconds, pgjdbc's unit.
        hikari.addDataSourceProperty("connectTimeout", "5");
        return new Database(new HikariDataSource(hikari), config.unfairUnsorted() ? Queries.unsorted() : Queries.contract());
    }

    public Queries queries() {
        return queries;
    }

    /** Borrows a connection; the checkout time counts as database time. */
    public DbSession open(RequestTiming timing) throws SQLException {
        long mark = timing.mark();
        try {
            Connection connection = pool.getConnection();
            return new DbSession(connection, timing);
        } finally {
            timing.addDb(mark);
        }
    }

    @Override
    public void close() {
        pool.close();
    }
}
